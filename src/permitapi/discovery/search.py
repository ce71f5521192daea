"""One discovery page over the live sources: concurrent reads, bounded retries, merge,
freshness, and the verdict on an empty result. No database here: metering wraps this.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from datetime import date, datetime
from typing import Any, Protocol
from zoneinfo import ZoneInfo

from permitapi.discovery.cursor import Position
from permitapi.discovery.filters import Filters, SearchQuery
from permitapi.discovery.merge import merge
from permitapi.sources.base import (
    QueryNotBuilt,
    RetryLater,
    SearchCriteria,
    SearchHit,
    SearchPage,
    SourceError,
    SourceFreshness,
)
from permitapi.sources.registry import Directory, Jurisdiction

log = logging.getLogger("permitapi.discovery")

# Broad first-page county searches (date bounds only, or a scope alone) that come back empty or
# failed are read again after these pauses before the empty result is called inconclusive: the
# county's ArcGIS layer answers wide date windows slowly and sometimes with an empty or cut-short
# page.
BROAD_COUNTY_RETRY_DELAYS: tuple[float, ...] = (0.5, 1.0)
BROAD_RETRY_SOURCES = ("epicla",)
# One source read (with the HTTP module's own retries) may not hold the page longer than this.
SOURCE_DEADLINE_SECONDS = 45.0
INCONCLUSIVE_RETRY_AFTER = 30  # seconds; a transient failure's own hint wins when larger
INCONCLUSIVE_RETRY_AFTER_MAX = 300
LAGGING_RETRY_AFTER = 3600  # sources publish daily; asking again within the hour is pointless


class SearchBackend(Protocol):
    """What discovery needs from the source gateway."""

    async def search(self, jurisdiction: Jurisdiction, criteria: SearchCriteria) -> SearchPage: ...


@dataclass(slots=True)
class SourceRead:
    source: str
    page: SearchPage | None = None
    error: BaseException | None = None
    attempts: int = 0
    skipped: bool = False  # exhausted on an earlier page: not asked

    @property
    def failed(self) -> bool:
        return self.error is not None

    @property
    def incomplete(self) -> bool:
        return self.page is not None and not self.page.complete


@dataclass(slots=True)
class PageOutcome:
    hits: list[SearchHit]
    next_position: Position | None
    warnings: list[dict[str, str]] = field(default_factory=list)
    freshness: dict[str, dict[str, Any]] = field(default_factory=dict)
    partial: bool = False
    verdict: str | None = None  # None | source_inconclusive | source_lagging (empty only)
    retry_after: int | None = None


def source_today(jurisdiction: Jurisdiction, now: datetime) -> date:
    """Calendar day at the source: lag and "future" are judged in the publisher's zone."""
    return now.astimezone(ZoneInfo(jurisdiction.timezone)).date()


def _worth_retrying(read: SourceRead) -> bool:
    if read.error is not None:
        return isinstance(read.error, (RetryLater, TimeoutError))
    return read.page is not None and (not read.page.complete or not read.page.hits)


async def _read_once(
    backend: SearchBackend, jurisdiction: Jurisdiction, criteria: SearchCriteria, read: SourceRead
) -> None:
    read.attempts += 1
    read.page, read.error = None, None
    try:
        async with asyncio.timeout(SOURCE_DEADLINE_SECONDS):
            read.page = await backend.search(jurisdiction, criteria)
    except (SourceError, TimeoutError) as exc:
        read.error = exc
    except QueryNotBuilt:
        raise  # our defect, not the source's: never a warning or an inconclusive verdict
    except Exception as exc:
        # An adapter bug must not take the other source's results down with it.
        log.exception("discovery read of %s failed unexpectedly", jurisdiction.slug)
        read.error = exc


async def _read_source(
    backend: SearchBackend,
    jurisdiction: Jurisdiction,
    criteria: SearchCriteria,
    *,
    broad: bool,
    retry_delays: Sequence[float],
    sleep: Callable[[float], Awaitable[None]],
) -> SourceRead:
    read = SourceRead(jurisdiction.slug)
    await _read_once(backend, jurisdiction, criteria, read)
    if broad and jurisdiction.slug in BROAD_RETRY_SOURCES:
        for delay in retry_delays:
            if not _worth_retrying(read):
                break
            await sleep(delay)
            await _read_once(backend, jurisdiction, criteria, read)
    return read


def _freshness(
    read: SourceRead, jurisdiction: Jurisdiction, filters: Filters, now: datetime
) -> dict[str, Any]:
    today = source_today(jurisdiction, now)
    through = min(filters.date_to, today) if filters.date_to else today
    reported = read.page.freshness if read.page is not None else None
    if read.failed:
        return {
            "newest_issue_date": reported.newest_issue_date if reported else None,
            "requested_through": through,
            "lag_days": reported.lag_days if reported else None,
            "reliability": "down",
        }
    if reported is None:
        # The source said nothing about its freshness: the newest non-future date it returned
        # is the best lower bound we have.
        dated = [h.issued_date for h in (read.page.hits if read.page else []) if h.issued_date]
        newest = max((d for d in dated if d <= today), default=None)
        reported = SourceFreshness(
            newest_issue_date=newest,
            requested_through=through,
            lag_days=(today - newest).days if newest else None,
            reliability="operational",
        )
    reliability = reported.reliability
    if read.incomplete and reliability == "operational":
        reliability = "degraded"
    return {
        "newest_issue_date": reported.newest_issue_date,
        "requested_through": reported.requested_through or through,
        "lag_days": reported.lag_days,
        "reliability": reliability,
    }


def _lagging(freshness: dict[str, Any], filters: Filters) -> bool:
    """The whole requested window is newer than anything the source has published."""
    newest = freshness["newest_issue_date"]
    return newest is not None and filters.date_from is not None and newest < filters.date_from


def _describe(error: BaseException) -> str:
    if isinstance(error, RetryLater):
        return f"temporarily unavailable ({error.reason})"
    if isinstance(error, TimeoutError):
        return "did not answer in time"
    if isinstance(error, SourceError):
        return f"could not be read ({type(error).__name__})"
    return "could not be read (internal error)"


async def run_page(
    backend: SearchBackend,
    directory: Directory,
    query: SearchQuery,
    position: Position,
    *,
    now: datetime,
    first_page: bool,
    retry_delays: Sequence[float] | None = None,
    sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
) -> PageOutcome:
    """Read every selected, not yet exhausted source concurrently and merge one page.

    Never raises for source failures: they become warnings, `partial`, and for an empty page a
    `verdict`. `retry_delays` apply only to broad first-page county searches (rule 5).
    """
    filters = query.filters
    broad = first_page and filters.broad
    delays = BROAD_COUNTY_RETRY_DELAYS if retry_delays is None else retry_delays
    jurisdictions = {}
    for slug in query.sources:
        found = directory.get(slug)
        if found is None:  # the directory file lost a discovery source: a deployment bug
            raise RuntimeError(f"discovery source {slug} is not in the directory")
        jurisdictions[slug] = found

    async def read(slug: str) -> SourceRead:
        offset = position.offsets.get(slug)
        if offset is None:
            return SourceRead(slug, skipped=True)
        return await _read_source(
            backend,
            jurisdictions[slug],
            SearchCriteria.page_of(filters, offset, query.limit),
            broad=broad,
            retry_delays=delays,
            sleep=sleep,
        )

    reads = await asyncio.gather(*(read(slug) for slug in query.sources))
    pages = {r.source: r.page.hits for r in reads if r.page is not None}
    merged = merge(pages, query.limit, filters)

    outcome = PageOutcome(hits=merged.hits, next_position=None)
    offsets: dict[str, int | None] = {}
    retry_after = INCONCLUSIVE_RETRY_AFTER
    for r in reads:
        jurisdiction = jurisdictions[r.source]
        start = position.offsets.get(r.source)
        if r.skipped:
            offsets[r.source] = None
            outcome.freshness[r.source] = _freshness(
                SourceRead(r.source, page=SearchPage([], False)), jurisdiction, filters, now
            )
            continue
        assert start is not None
        outcome.freshness[r.source] = _freshness(r, jurisdiction, filters, now)
        if r.error is not None:
            outcome.partial = True
            offsets[r.source] = start  # not read: a later page asks again from here
            outcome.warnings.append(
                {
                    "source": r.source,
                    "code": "source_unavailable",
                    "message": f"{jurisdiction.display_name} {_describe(r.error)}; "
                    "its permits are missing from this page.",
                }
            )
            if isinstance(r.error, RetryLater):
                retry_after = max(retry_after, int(r.error.retry_after))
            continue
        assert r.page is not None
        used = merged.consumed.get(r.source, 0)
        exhausted = not r.page.has_more and used >= len(r.page.hits)
        offsets[r.source] = None if exhausted else start + used
        for note in r.page.warnings:
            outcome.warnings.append({"source": r.source, "code": "source_notice", "message": note})
        if not r.page.complete:
            outcome.partial = True
            outcome.warnings.append(
                {
                    "source": r.source,
                    "code": "source_incomplete",
                    "message": f"The read of {jurisdiction.display_name} was cut short; "
                    "some matching permits may be missing.",
                }
            )
        if _lagging(outcome.freshness[r.source], filters):
            outcome.warnings.append(
                {
                    "source": r.source,
                    "code": "source_lagging",
                    "message": f"{jurisdiction.display_name} has published issue dates only "
                    f"through {outcome.freshness[r.source]['newest_issue_date']}, before "
                    "the requested window.",
                }
            )
    if any(value is not None for value in offsets.values()):
        outcome.next_position = Position(offsets)

    if not outcome.hits:
        if any(r.failed or r.incomplete for r in reads):
            outcome.verdict = "source_inconclusive"
            outcome.retry_after = min(retry_after, INCONCLUSIVE_RETRY_AFTER_MAX)
        elif any(_lagging(f, filters) for f in outcome.freshness.values()):
            outcome.verdict = "source_lagging"
            outcome.retry_after = LAGGING_RETRY_AFTER
    return outcome
