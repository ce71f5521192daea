"""Periodic passes that any number of workers run once per period: `PassLease`, the claim
rule every daily pass uses (saved searches, permit_created, the watch check).

One `job_leases` row (worker/models.py) per pass name: who holds it (`owner`), until when
(`leased_until`), and when the pass last completed (`last_completed_at`). A pass is due when
it never completed or its last completion is at least one period old. A worker runs a due
pass only while it holds the lease, so two workers never run one pass at once; a worker that
dies loses the lease when it lapses, and another takes the pass over. A pass that fails
without completing keeps its lease until a retry moment of its choosing (`postpone`), so a
failing pass is retried later, not in a loop.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta

from sqlalchemy.ext.asyncio import AsyncSession

from permitapi.context import AppContext
from permitapi.kit.ids import new_owner_id
from permitapi.worker import lease_repository

# How long a worker that found a pass held by another waits before asking the database again.
HELD_RECHECK = timedelta(minutes=1)


def is_due(last_completed: datetime | None, period: timedelta, now: datetime) -> bool:
    """A pass is due when it never completed or its last completion is a period old."""
    return last_completed is None or now - last_completed >= period


@dataclass
class PassLease:
    """The lease of one named pass, held by one job source instance."""

    name: str
    period: timedelta
    lease: timedelta
    owner: str = field(default_factory=new_owner_id)
    # A database read tells when the pass is next due; until then no query is made.
    _next_check: datetime | None = field(default=None, repr=False)

    async def claim(self, ctx: AppContext, *, force: bool = False) -> bool:
        """True when the pass is due (or `force`: an operator's "run it now") and this owner
        now holds its lease; a pass another worker is running is never joined, forced or not.

        A cheap read first (most polls find the pass not due); then the conditional claim and,
        in the same transaction, the due check again: another worker may have completed the
        pass between the read and the claim.
        """
        now = ctx.clock.now()
        if force:
            async with ctx.transaction() as session:
                return await lease_repository.try_acquire(
                    session, self.name, self.owner, now, now + self.lease
                )
        if self._next_check is not None and now < self._next_check:
            return False
        async with ctx.sessionmaker() as session:
            last = await lease_repository.last_completed(session, self.name)
        if not self._due(last, now):
            return False
        async with ctx.transaction() as session:
            if not await lease_repository.try_acquire(
                session, self.name, self.owner, now, now + self.lease
            ):
                self._next_check = now + HELD_RECHECK
                return False
            last = await lease_repository.last_completed(session, self.name)
            if self._due(last, now):
                self._next_check = None
                return True
            await lease_repository.release(session, self.name, self.owner)
        return False

    def _due(self, last: datetime | None, now: datetime) -> bool:
        if is_due(last, self.period, now):
            return True
        assert last is not None  # never completed is always due
        self._next_check = last + self.period
        return False

    async def renew(self, ctx: AppContext) -> bool:
        """Extend the lease of a pass still running; False when it was lost (it lapsed and
        another worker took the pass over: stop)."""
        now = ctx.clock.now()
        async with ctx.transaction() as session:
            return await lease_repository.try_acquire(
                session, self.name, self.owner, now, now + self.lease
            )

    async def complete(self, session: AsyncSession, now: datetime) -> bool:
        """Record completion in the caller's transaction (with the pass's own writes, so they
        commit together); False when the lease was lost."""
        done = await lease_repository.complete(session, self.name, self.owner, now)
        if done:
            self._next_check = now + self.period
        return done

    async def postpone(self, ctx: AppContext, until: datetime) -> None:
        """A failed pass: keep the lease until `until`, when any worker may retry it."""
        async with ctx.transaction() as session:
            await lease_repository.try_acquire(
                session, self.name, self.owner, ctx.clock.now(), until
            )
        self._next_check = until
