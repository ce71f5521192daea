"""Worker job `retention`: events, events-feed entries and webhook delivery history
are kept 30 days (EVENTS_RETENTION), then deleted. Runs at most once per PURGE_INTERVAL."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Final

from permitapi.account.plans import EVENTS_RETENTION
from permitapi.context import AppContext
from permitapi.event import repository as events
from permitapi.webhook import repository as webhooks
from permitapi.worker import progress

PURGE_INTERVAL: Final = timedelta(minutes=10)


class MonitoringRetention:
    name = "retention"

    def __init__(self) -> None:
        self._last_run: datetime | None = None

    async def run_due(self, ctx: AppContext) -> int:
        now = ctx.clock.now()
        if self._last_run is not None and now - self._last_run < PURGE_INTERVAL:
            return 0
        self._last_run = now
        cutoff = now - EVENTS_RETENTION
        async with ctx.transaction() as session:
            purged = await events.purge_before(session, cutoff)
            purged += await webhooks.purge_deliveries_before(session, cutoff)
        progress.advance(purged)
        return purged
