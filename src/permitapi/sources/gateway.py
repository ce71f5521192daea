"""The one door from services to the portals: picks the family adapter for a jurisdiction,
calls it, and records every outcome for source health.

Services call `SourceGateway.fetch_permit` / `.search`; they never construct adapters.
Adapter construction: each family's adapter class takes the shared `PortalHttp`.
Every call's outcome is recorded with its latency: success | not_found | retry_later |
portal_changed | blocked | error (an unexpected exception: an adapter bug). A family without
discovery (`SearchNotSupported`) records nothing: the portal was not asked. Nor does a query
that could not be built (`QueryNotBuilt`): it is logged and counted as our defect
(`permitapi_query_build_defects`), and never moves source health.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Mapping, Sequence
from typing import Protocol, TypeVar

from permitapi.sources.base import (
    Blocked,
    NotFoundAtSource,
    PermitSnapshot,
    PortalChanged,
    QueryNotBuilt,
    RetryLater,
    SearchCriteria,
    SearchNotSupported,
    SearchPage,
    SourceAdapter,
)
from permitapi.sources.browser.reader import PageReader
from permitapi.sources.families import ADAPTERS, load
from permitapi.sources.http import PortalHttp
from permitapi.sources.registry import Jurisdiction
from permitapi.telemetry.metrics import PORTAL_FETCHES, QUERY_DEFECTS

T = TypeVar("T")
log = logging.getLogger("permitapi.sources.gateway")


class OutcomeRecorder(Protocol):
    async def record(
        self,
        source: str,
        operation: str,
        outcome: str,
        reason: str | None,
        latency_ms: float | None,
    ) -> None:
        """Persist one fetch outcome (source health). Must not raise."""
        ...

    async def record_many(
        self,
        source: str,
        operation: str,
        outcomes: Sequence[tuple[str, str | None, float | None]],
    ) -> None:
        """Persist many (outcome, reason, latency_ms) of one source at once, in order (a
        batch's fetches). Must not raise."""
        ...


def classify_outcome(error: BaseException | None) -> tuple[str, str | None]:
    """(outcome, reason) recorded for a call that ended with `error` (None: success)."""
    if error is None:
        return "success", None
    if isinstance(error, NotFoundAtSource):
        return "not_found", None
    if isinstance(error, RetryLater):
        return "retry_later", error.reason
    if isinstance(error, PortalChanged):
        return "portal_changed", error.message[:200]
    if isinstance(error, Blocked):
        return "blocked", error.message[:200]
    return "error", type(error).__name__


class SourceGateway:
    def __init__(
        self,
        http: PortalHttp,
        recorder: OutcomeRecorder | None = None,
        *,
        adapters: Mapping[str, SourceAdapter] | None = None,
        pages: PageReader | None = None,
    ) -> None:
        """`adapters` pre-seeds family adapters by platform (tests, alternative builds); the
        rest are constructed lazily from `families.ADAPTERS` with the shared `http` (and the
        process's `pages` reader for families that read record pages in a browser)."""
        self.http = http
        self.pages = pages or PageReader()
        self.recorder = recorder
        self._adapters: dict[str, SourceAdapter] = dict(adapters or {})

    def adapter(self, jurisdiction: Jurisdiction) -> SourceAdapter:
        family = jurisdiction.platform
        if family not in self._adapters:
            cls = load(ADAPTERS[family])
            reads_pages = getattr(cls, "reads_pages", False)
            self._adapters[family] = cls(self.http, self.pages) if reads_pages else cls(self.http)
        return self._adapters[family]

    def register(self, family: str, adapter: SourceAdapter) -> None:
        """Use `adapter` for a family instead of loading the configured class (tests, tools)."""
        self._adapters[family] = adapter

    async def fetch_permit(self, jurisdiction: Jurisdiction, permit_number: str) -> PermitSnapshot:
        """The adapter's snapshot, or its typed SourceError; the outcome is recorded either way."""
        adapter = self.adapter(jurisdiction)
        return await self._recorded(
            jurisdiction, "fetch", adapter.fetch_permit(jurisdiction, permit_number)
        )

    async def fetch_many(
        self, jurisdiction: Jurisdiction, permit_numbers: list[str]
    ) -> dict[str, PermitSnapshot | Exception]:
        """`fetch_permit` for many permits of one jurisdiction (batch status): each number's
        snapshot or the exception its fetch ended with; every outcome is recorded.

        A family adapter with `fetch_many` shares what can be shared (LADBS: one Socrata query
        for the whole batch); otherwise the permits are fetched concurrently, at most the
        source's `max_concurrency` at a time. Either way `PortalHttp` keeps each host within
        its politeness caps.
        """
        adapter = self.adapter(jurisdiction)
        bulk = getattr(adapter, "fetch_many", None)
        if bulk is None:
            cap = asyncio.Semaphore(self.http.policy(jurisdiction.slug).max_concurrency)

            async def one(number: str) -> PermitSnapshot | Exception:
                async with cap:
                    try:
                        return await self.fetch_permit(jurisdiction, number)
                    except Exception as exc:
                        return exc

            fetched = await asyncio.gather(*(one(n) for n in permit_numbers))
            return dict(zip(permit_numbers, fetched, strict=True))
        started = time.perf_counter()
        try:
            results: dict[str, PermitSnapshot | Exception] = dict(
                await bulk(jurisdiction, permit_numbers)
            )
        except Exception as failure:
            results = dict.fromkeys(permit_numbers, failure)
        for result in results.values():
            outcome = classify_outcome(result if isinstance(result, Exception) else None)[0]
            PORTAL_FETCHES.labels(jurisdiction.slug, "fetch", outcome).inc()
        if self.recorder is not None:
            # One write for the batch: a transaction per permit would add up to tens of
            # milliseconds after the portal answered.
            latency_ms = _ms_since(started)
            outcomes = [
                (*classify_outcome(r if isinstance(r, Exception) else None), latency_ms)
                for r in results.values()
            ]
            await self.recorder.record_many(jurisdiction.slug, "fetch", outcomes)
        return results

    def has_change_feed(self, jurisdiction: Jurisdiction) -> bool:
        return getattr(self.adapter(jurisdiction), "change_signatures", None) is not None

    async def change_signatures(
        self, jurisdiction: Jurisdiction, permit_numbers: list[str]
    ) -> dict[str, str]:
        """What the source's change feed says of each permit now (status text and dates), in
        as few requests as the family allows; a permit the feed does not list is absent. Only
        for families with a change feed (`has_change_feed`)."""
        method = getattr(self.adapter(jurisdiction), "change_signatures", None)
        if method is None:
            raise SearchNotSupported(jurisdiction.slug, "no change feed")
        found: dict[str, str] = await self._recorded(
            jurisdiction, "changes", method(jurisdiction, permit_numbers)
        )
        return found

    def has_probe(self, jurisdiction: Jurisdiction) -> bool:
        return getattr(self.adapter(jurisdiction), "probe_signature", None) is not None

    async def probe_signature(
        self, jurisdiction: Jurisdiction, permit_number: str, page_url: str
    ) -> str:
        """One request for what a permit's own page says now (status and inspection results),
        for families without a change feed (`has_probe`)."""
        method = getattr(self.adapter(jurisdiction), "probe_signature", None)
        if method is None:
            raise SearchNotSupported(jurisdiction.slug, "no probe")
        found: str = await self._recorded(
            jurisdiction, "probe", method(jurisdiction, permit_number, page_url)
        )
        return found

    async def search(self, jurisdiction: Jurisdiction, criteria: SearchCriteria) -> SearchPage:
        adapter = self.adapter(jurisdiction)
        return await self._recorded(jurisdiction, "search", adapter.search(jurisdiction, criteria))

    async def _recorded(self, jurisdiction: Jurisdiction, operation: str, call: Awaitable[T]) -> T:
        started = time.perf_counter()
        try:
            result = await call
        except SearchNotSupported:
            raise
        except QueryNotBuilt as defect:
            log.error("%s %s: %s", jurisdiction.slug, operation, defect, exc_info=defect)
            QUERY_DEFECTS.labels(jurisdiction.slug).inc()
            raise
        except Exception as error:
            await self._record(jurisdiction, operation, error, started)
            raise
        await self._record(jurisdiction, operation, None, started)
        return result

    async def _record(
        self,
        jurisdiction: Jurisdiction,
        operation: str,
        error: BaseException | None,
        started: float,
    ) -> None:
        outcome, reason = classify_outcome(error)
        PORTAL_FETCHES.labels(jurisdiction.slug, operation, outcome).inc()
        if self.recorder is None:
            return
        await self.recorder.record(
            jurisdiction.slug, operation, outcome, reason, _ms_since(started)
        )

    async def aclose(self) -> None:
        await self.pages.aclose()
        await self.http.aclose()

    def use_adapter(self, family: str, adapter: SourceAdapter) -> None:
        """Serve `family` with this adapter instance (tests and benchmarks plug fakes here)."""
        self._adapters[family] = adapter


def _ms_since(started: float) -> float:
    return round((time.perf_counter() - started) * 1000, 1)
