"""The skeleton of a purge: a job source that deletes expired rows at most once per interval
per worker (no lease: a purge run twice deletes nothing the second time).

A purge names itself, says how often it runs and deletes in one transaction; the skeleton
keeps the interval and reports the rows deleted as progress and as the pass's count.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import ClassVar, Final

from sqlalchemy.ext.asyncio import AsyncSession

from permitapi.context import AppContext
from permitapi.worker import progress

PURGE_INTERVAL: Final = timedelta(minutes=10)


class Purge:
    name: str
    interval: ClassVar[timedelta] = PURGE_INTERVAL

    def __init__(self) -> None:
        self._last_run: datetime | None = None

    async def run_due(self, ctx: AppContext) -> int:
        """Purge once the interval has passed; returns how many rows were deleted."""
        now = ctx.clock.now()
        if self._last_run is not None and now - self._last_run < self.interval:
            return 0
        self._last_run = now
        async with ctx.transaction() as session:
            purged = await self.purge(session, now)
        progress.advance(purged)
        return purged

    async def purge(self, session: AsyncSession, now: datetime) -> int:
        """Delete what expired by `now` in the caller's transaction; returns how many rows."""
        raise NotImplementedError
