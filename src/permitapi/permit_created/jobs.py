"""Worker job `permit-created`: the shared daily city-and-county discovery monitor.

Once a day (a `job_leases` lease: one pass across all workers) it reads every permit LADBS and
EPIC-LA list with an issue date from three days ago at the sources on, so that a permit
published a day or two late is still caught. The window has no upper bound: a source that
stamps a later day than ours (a portal stamping in UTC between midnight UTC and midnight in Los
Angeles) is still read, never silently left out; a future-dated outlier is read too, and
announced once like any identity never observed before. Identities it never observed before are
recorded; from the second successful pass on, each emits one `permit_created` event
(`{permit: <discovery hit>, first_observed_at}`) to the keys entitled to it: an active live key
of a paid plan with the Permit Discovery add-on that has an active webhook explicitly
subscribed to `permit_created` (matching the webhook's jurisdiction_filter). The first
successful pass is a silent baseline: no backfill.

A partial read (a source failed or was cut short, an unverifiable empty result) or a capped
one (more than MAX_PAGES pages) records and emits nothing: the lease is kept until
RETRY_DELAY, then any worker retries the pass. Identities, events and the pass's completion
are written in one transaction. Sources are read below the metering layer: no credits, no
saved-search slots.
"""

from __future__ import annotations

import logging
from datetime import date, timedelta
from typing import Final

from permitapi.context import AppContext
from permitapi.discovery.cursor import Position
from permitapi.discovery.filters import DISCOVERY_SOURCES, Filters, SearchQuery
from permitapi.discovery.hits import hit_data
from permitapi.discovery.search import source_today
from permitapi.event import service as events
from permitapi.kit.clock import isoformat_z
from permitapi.permit_created import repository
from permitapi.saved_search.evaluation import (
    IncompleteRead,
    checked_page,
    identity,
    unique_hits,
)
from permitapi.saved_search.service import entitled_plans
from permitapi.sources.base import SearchHit
from permitapi.webhook.fanout import matches
from permitapi.worker import lease_repository, progress
from permitapi.worker.daily_pass import DAILY, DailyPass

log = logging.getLogger("permitapi.permit_created")

NAME: Final = "permit-created"
PERIOD: Final = DAILY
LEASE: Final = timedelta(minutes=30)
RETRY_DELAY: Final = timedelta(minutes=30)
WINDOW_DAYS: Final = 3
PAGE_SIZE: Final = 100
MAX_PAGES: Final = 50  # 5,000 permits in three days: far above both sources' volume
# Permits leave the window after three days; their identities are kept well past that.
IDENTITY_RETENTION: Final = timedelta(days=30)
IDLE_POLL_SECONDS: Final = 60.0


class LeaseLost(Exception):
    pass


def window_start(ctx: AppContext) -> date:
    """The first issue date read: WINDOW_DAYS calendar days back, at the source whose calendar
    is the furthest behind."""
    now = ctx.clock.now()
    days = []
    for slug in DISCOVERY_SOURCES:
        jurisdiction = ctx.directory.get(slug)
        if jurisdiction is None:  # the directory lost a discovery source: a deployment bug
            raise RuntimeError(f"discovery source {slug} is not in the directory")
        days.append(source_today(jurisdiction, now))
    return min(days) - timedelta(days=WINDOW_DAYS - 1)


class PermitCreatedMonitor(DailyPass):
    """Job source `permit-created`; `run_due` returns the number of identities checked."""

    name = NAME
    lease_length = LEASE
    idle_poll_seconds = IDLE_POLL_SECONDS

    async def run_pass(self, ctx: AppContext) -> int:
        try:
            hits = await self._read_window(ctx)
            checked, new, emitted = await self._record(ctx, hits)
        except IncompleteRead as failure:
            log.info("%s: read incomplete (%s): %s", NAME, failure.code, failure.message)
            return await self._failed(ctx)
        except LeaseLost:
            log.warning("%s: lease lost; another worker runs the pass", NAME)
            return 0
        except Exception:
            log.exception("%s: pass failed unexpectedly", NAME)
            return await self._failed(ctx)
        log.info("%s: checked=%d new=%d emitted=%d failed=0", NAME, checked, new, emitted)
        return checked

    async def _failed(self, ctx: AppContext) -> int:
        await self.lease.postpone(ctx, ctx.clock.now() + RETRY_DELAY)
        log.info("%s: checked=0 new=0 emitted=0 failed=1", NAME)
        return 0

    async def _read_window(self, ctx: AppContext) -> list[SearchHit]:
        query = SearchQuery(
            sources=DISCOVERY_SOURCES,
            filters=Filters(date_from=window_start(ctx)),
            limit=PAGE_SIZE,
            cursor=None,
            scoped=True,
        )
        hits: list[SearchHit] = []
        position = Position.start(query.sources)
        for page_number in range(MAX_PAGES):
            outcome = await checked_page(ctx, query, position, first_page=page_number == 0)
            hits.extend(outcome.hits)
            progress.advance(len(outcome.hits))
            if outcome.next_position is None:
                return unique_hits(hits)
            position = outcome.next_position
            if not await self.lease.renew(ctx):
                raise LeaseLost
        raise IncompleteRead(
            "capped",
            f"More than {MAX_PAGES * PAGE_SIZE} permits in the window; the read was capped.",
        )

    async def _record(self, ctx: AppContext, hits: list[SearchHit]) -> tuple[int, int, int]:
        """(checked, new, emitted), written with the pass's completion in one transaction."""
        now = ctx.clock.now()
        emitted = 0
        async with ctx.transaction() as session:
            baseline = await lease_repository.last_completed(session, NAME) is None
            if not await self.lease.complete(session, now):
                raise LeaseLost
            known = await repository.observed_among(session, [identity(h) for h in hits])
            new = [hit for hit in hits if identity(hit) not in known]
            await repository.insert_observed(session, [identity(h) for h in new], now)
            await repository.touch_observed(session, sorted(known), now)
            await repository.forget_before(session, now - IDENTITY_RETENTION)
            if not baseline and new:
                webhooks = await repository.subscribed_webhooks(
                    session, events.PERMIT_CREATED, entitled_plans()
                )
                # Oldest first, so feeds read in the order the permits were issued.
                for hit in reversed(new):
                    recipients = sorted(
                        {
                            w.api_key_id
                            for w in webhooks
                            if matches(w, events.PERMIT_CREATED, hit.jurisdiction)
                        }
                    )
                    if not recipients:
                        continue  # nobody is told: the identity alone is recorded
                    await events.emit(
                        session,
                        events.PERMIT_CREATED,
                        data={"permit": hit_data(hit), "first_observed_at": isoformat_z(now)},
                        occurred_at=now,
                        recipients=recipients,
                        permit_number=hit.permit_number,
                        jurisdiction=hit.jurisdiction,
                    )
                    emitted += 1
        return len(hits), len(new), emitted
