"""The daily watch check (job source `watch-check`): every watched permit is read at most once
a day, and on sources with a queryable change feed far less.

- LADBS and EPIC-LA: the due permits of a jurisdiction are asked about together, 200 per
  change-feed query (LADBS open data by `permit_nbr in (...)` with `status_desc` and
  `status_date`; EPIC-LA's ArcGIS layer by `CASENUMBER IN (...)` with status and dates). Only
  the permits whose answer differs from the last one (or that the feed does not list) are
  fetched in full; 1,000 unchanged permits cost 5 requests. They stay on one daily schedule so
  that the next day's check batches them again.
- Accela (and any family without a feed): each permit is fetched in full when due, each on
  its own daily schedule, spread over the day by their enrollment times.

A full fetch goes through `permit.lookup.refresh`, so its events are emitted exactly as for a lookup
(watch.observation). A source that fails leaves its permits due: the next pass retries them.
"""

from __future__ import annotations

import hashlib
import logging
from collections import defaultdict
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any, Final

from permitapi.context import AppContext
from permitapi.event import repository as event_repository
from permitapi.permit import repository as permits
from permitapi.permit.lookup.refresh import refresh_many
from permitapi.sources.base import SourceError
from permitapi.sources.registry import Jurisdiction
from permitapi.watch import repository
from permitapi.watch.models import WatchedPermit
from permitapi.worker import progress
from permitapi.worker.leases import PassLease

log = logging.getLogger("permitapi.watch.check")

PERIOD: Final = timedelta(days=1)
PASS_LIMIT: Final = 5_000  # permits per pass; the rest stay due for the next pass
PASS_EVERY: Final = timedelta(minutes=5)
PASS_LEASE: Final = timedelta(minutes=30)
FETCH_CHUNK: Final = 25
READ_SLICE: Final = 200
# watched_permits.change_signature is VARCHAR(400).
SIGNATURE_MAX: Final = 400


@dataclass
class CheckSummary:
    checked: int = 0
    changed: int = 0
    emitted: int = 0
    failed: int = 0
    requests: dict[str, int] = field(default_factory=dict)

    def line(self) -> str:
        return (
            f"checked {self.checked}, changed {self.changed}, emitted {self.emitted}, "
            f"failed {self.failed}"
        )


class WatchCheckIncomplete(Exception):
    """A pass checked every jurisdiction it could, but some failed unexpectedly (logged)."""


def storable_signature(signature: str) -> str:
    """A change signature in the form compared and stored: unchanged when it fits the column;
    otherwise its status text (what `_same_status` reads), cut to fit, and a digest of the
    whole, so that every change is still told apart.

    An Accela probe's signature lists every completed inspection, unbounded: PostgreSQL
    refused to store a longer one, so the pass failed at that agency every time and never
    checked the jurisdictions after it (their events were lost for good); SQLite stored it.
    """
    if len(signature) <= SIGNATURE_MAX:
        return signature
    digest = "sha256:" + hashlib.sha256(signature.encode()).hexdigest()
    status = signature.split("|", 1)[0][: SIGNATURE_MAX - len(digest) - 1]
    return f"{status}|{digest}"


def _same_status(feed_signature: str, stored_raw_status: str | None) -> bool:
    """For a permit checked for the first time: does the feed's status text match the stored
    representation's? (The signature starts with the status text on every family.)"""
    feed_status = feed_signature.split("|", 1)[0].strip().casefold()
    return feed_status == (stored_raw_status or "").strip().casefold()


class WatchCheck:
    name = "watch-check"

    def __init__(
        self,
        *,
        force: bool = False,
        jurisdictions: set[str] | None = None,
    ) -> None:
        """`force`: check every watched permit now, due or not (`permitapi jobs run`);
        `jurisdictions`: only these (benchmarks measure one family at a time)."""
        self.force = force
        self.jurisdictions = jurisdictions
        # One worker runs a pass at a time, at most every PASS_EVERY: two workers reading the
        # same due permits would double the portal requests.
        self.lease = PassLease(self.name, period=PASS_EVERY, lease=PASS_LEASE)
        self.last = CheckSummary()

    def poll_interval(self, ctx: AppContext) -> float:
        return 300.0

    async def run_due(self, ctx: AppContext) -> int:
        if self.force:
            return await self._pass(ctx)
        if not await self.lease.claim(ctx):
            return 0
        try:
            checked = await self._pass(ctx)
        finally:
            async with ctx.transaction() as session:
                await self.lease.complete(session, ctx.clock.now())
        return checked

    async def _pass(self, ctx: AppContext) -> int:
        started = ctx.clock.now()
        horizon = started + PERIOD * 366 if self.force else started
        async with ctx.sessionmaker() as session:
            due = await repository.due_permits(
                session, horizon, jurisdictions=self.jurisdictions, limit=PASS_LIMIT
            )
            first_seq = await event_repository.last_seq(session)
        progress.expect(len(due))
        summary = CheckSummary()
        by_jurisdiction: dict[str, list[WatchedPermit]] = defaultdict(list)
        for row in due:
            by_jurisdiction[row.jurisdiction].append(row)
        crashed: list[str] = []
        for slug, rows in sorted(by_jurisdiction.items()):
            jurisdiction = ctx.directory.get(slug)
            if jurisdiction is None:
                continue
            try:
                if ctx.gateway.has_change_feed(jurisdiction):
                    await self._with_feed(ctx, jurisdiction, rows, summary)
                else:
                    await self._one_by_one(ctx, jurisdiction, rows, summary)
            except Exception:
                # One jurisdiction's unexpected failure (a database error, a bug) must not
                # keep the others from being checked: they come after it in every pass. Its
                # permits stay due, so the next pass tries them again.
                log.exception("watch check of %s failed; the other jurisdictions go on", slug)
                crashed.append(slug)
        async with ctx.sessionmaker() as session:
            summary.emitted = await event_repository.count_after(session, first_seq)
        self.last = summary
        if due:
            log.info("watch check: %s", summary.line())
        if crashed:
            raise WatchCheckIncomplete(f"watch check failed for {', '.join(crashed)}")
        return summary.checked

    async def _with_feed(
        self,
        ctx: AppContext,
        jurisdiction: Jurisdiction,
        rows: list[WatchedPermit],
        summary: CheckSummary,
    ) -> None:
        numbers = [row.permit_number for row in rows]
        try:
            signatures = {
                number: storable_signature(signature)
                for number, signature in (
                    await ctx.gateway.change_signatures(jurisdiction, numbers)
                ).items()
            }
        except SourceError as exc:
            await self._failed(ctx, rows, f"change feed: {exc.message}"[:300])
            summary.failed += len(rows)
            progress.advance(len(rows))
            return
        stored = {}
        async with ctx.sessionmaker() as session:
            # In slices: one statement per thousand identities would exceed SQLite's limits.
            for start in range(0, len(numbers), READ_SLICE):
                cached = await permits.read_cached_many(
                    session,
                    [(jurisdiction.slug, n) for n in numbers[start : start + READ_SLICE]],
                )
                stored.update({number: row for (_, number), row in cached.items()})
        changed = []
        for row in rows:
            signature = signatures.get(row.permit_number)
            if signature is None:
                changed.append(row)  # not in the feed: read it in full
            elif row.change_signature is None:
                record = stored.get(row.permit_number)
                if record is None or not _same_status(signature, record.raw_status):
                    changed.append(row)
            elif signature != row.change_signature:
                changed.append(row)
        outcomes = await self._fetch(ctx, jurisdiction, changed)
        now = ctx.clock.now()
        updates: list[dict[str, Any]] = []
        for row in rows:
            outcome = outcomes.get(row.permit_number)
            failed = outcome is not None and outcome != "fetched"
            updates.append(
                {
                    "jurisdiction": row.jurisdiction,
                    "permit_number": row.permit_number,
                    "change_signature": (
                        row.change_signature if failed else signatures.get(row.permit_number)
                    ),
                    "last_checked_at": now,
                    "next_check_at": now + timedelta(minutes=30) if failed else now + PERIOD,
                    "last_check_error": outcome if failed else None,
                }
            )
            summary.failed += int(failed)
        summary.checked += len(rows)
        summary.changed += sum(1 for kind in outcomes.values() if kind == "fetched")
        async with ctx.transaction() as session:
            await repository.record_checks(session, updates)
        progress.advance(len(rows))

    async def _one_by_one(
        self,
        ctx: AppContext,
        jurisdiction: Jurisdiction,
        rows: list[WatchedPermit],
        summary: CheckSummary,
    ) -> None:
        """Families without a feed: one probe request per permit (Accela: the record's own
        page, at the URL its last full read stored) and a full read only when the probe's
        answer changed, the probe failed, or the family has no probe."""
        probe = ctx.gateway.has_probe(jurisdiction)
        for start in range(0, len(rows), FETCH_CHUNK):
            chunk = rows[start : start + FETCH_CHUNK]
            signatures: dict[str, str] = {}
            changed = chunk
            if probe:
                signatures, changed = await self._probe(ctx, jurisdiction, chunk)
            outcomes = await self._fetch(ctx, jurisdiction, changed)
            now = ctx.clock.now()
            updates = []
            for row in chunk:
                outcome = outcomes.get(row.permit_number, "fetched")
                failed = outcome != "fetched"
                # Keep each permit on its own daily slot: the spread set at enrollment stays.
                base = row.next_check_at if not self.force else now
                next_at = max(base + PERIOD, now + timedelta(hours=1))
                updates.append(
                    {
                        "jurisdiction": row.jurisdiction,
                        "permit_number": row.permit_number,
                        "change_signature": (
                            row.change_signature
                            if failed
                            else signatures.get(row.permit_number, row.change_signature)
                        ),
                        "last_checked_at": now,
                        "next_check_at": now + timedelta(minutes=30) if failed else next_at,
                        "last_check_error": outcome if failed else None,
                    }
                )
                summary.failed += int(failed)
            summary.changed += sum(1 for kind in outcomes.values() if kind == "fetched")
            summary.checked += len(chunk)
            async with ctx.transaction() as session:
                await repository.record_checks(session, updates)
            progress.advance(len(chunk))

    async def _probe(
        self, ctx: AppContext, jurisdiction: Jurisdiction, rows: list[WatchedPermit]
    ) -> tuple[dict[str, str], list[WatchedPermit]]:
        """Each permit's probe signature, and the permits to read in full."""
        async with ctx.sessionmaker() as session:
            pages = await permits.page_urls(
                session, [(jurisdiction.slug, row.permit_number) for row in rows]
            )
        signatures: dict[str, str] = {}
        changed: list[WatchedPermit] = []
        for row in rows:
            page = pages.get(row.permit_number)
            if page is None:
                changed.append(row)
                continue
            url, raw_status = page
            try:
                signature = storable_signature(
                    await ctx.gateway.probe_signature(jurisdiction, row.permit_number, url)
                )
            except SourceError:
                changed.append(row)  # a stale page link or an outage: the full read decides
                continue
            signatures[row.permit_number] = signature
            if row.change_signature is None:
                if not _same_status(signature, raw_status):
                    changed.append(row)
            elif signature != row.change_signature:
                changed.append(row)
        return signatures, changed

    async def _fetch(
        self, ctx: AppContext, jurisdiction: Jurisdiction, rows: list[WatchedPermit]
    ) -> dict[str, str]:
        """Full fetches (events are emitted as they are stored); number -> "fetched" or the
        failure reason."""
        if not rows:
            return {}
        outcomes = await refresh_many(
            ctx, [(jurisdiction, row.permit_number) for row in rows], since=ctx.clock.now()
        )
        found = {}
        for (_, number), outcome in outcomes.items():
            found[number] = (
                "fetched" if outcome.kind == "fetched" else (outcome.reason or outcome.kind)
            )
        return found

    async def _failed(self, ctx: AppContext, rows: list[WatchedPermit], error: str) -> None:
        now = ctx.clock.now()
        async with ctx.transaction() as session:
            await repository.record_checks(
                session,
                [
                    {
                        "jurisdiction": row.jurisdiction,
                        "permit_number": row.permit_number,
                        "last_check_error": error,
                        "next_check_at": now + timedelta(minutes=30),
                    }
                    for row in rows
                ],
            )
