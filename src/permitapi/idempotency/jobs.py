"""Worker job: delete expired idempotency rows.

Expired rows are already harmless (a claim replaces them), so this only keeps the table from
growing with keys that are never sent again. It runs at most once per PURGE_INTERVAL per worker.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from permitapi.context import AppContext
from permitapi.idempotency import service
from permitapi.worker import progress

PURGE_INTERVAL = timedelta(minutes=10)


class IdempotencyPurge:
    name = "idempotency-purge"

    def __init__(self) -> None:
        self._last_run: datetime | None = None

    async def run_due(self, ctx: AppContext) -> int:
        """Purge once the interval has passed; returns how many rows were deleted."""
        now = ctx.clock.now()
        if self._last_run is not None and now - self._last_run < PURGE_INTERVAL:
            return 0
        self._last_run = now
        async with ctx.transaction() as session:
            purged = await service.purge_expired(session, now)
        progress.advance(purged)
        return purged
