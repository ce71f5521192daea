"""The skeleton of a daily pass: a job source that runs once a day across every worker, under a
`PassLease` (worker/leases.py), idling between polls for `idle_poll_seconds`.

A pass names itself and its lease length and implements `run_pass`, which runs only while this
worker holds the lease; it renews, completes or postpones the lease itself (`self.lease`),
because only it knows when its writes are done. `force` runs the pass now even if it ran today
(`permitapi jobs run`), never while another worker runs it.
"""

from __future__ import annotations

from datetime import timedelta
from typing import ClassVar, Final

from permitapi.context import AppContext
from permitapi.worker.leases import PassLease

DAILY: Final = timedelta(days=1)


class DailyPass:
    name: str
    lease_length: ClassVar[timedelta]
    idle_poll_seconds: ClassVar[float] = 60.0

    def __init__(self, *, force: bool = False) -> None:
        """`force`: run the pass now even if it ran today (`permitapi jobs run`)."""
        self.force = force
        self.lease = PassLease(self.name, period=DAILY, lease=self.lease_length)

    def poll_interval(self, ctx: AppContext) -> float:
        return self.idle_poll_seconds

    def enabled(self, ctx: AppContext) -> bool:
        """Whether this deployment runs the pass (when not forced)."""
        return True

    async def run_due(self, ctx: AppContext) -> int:
        if not (self.enabled(ctx) or self.force):
            return 0
        if not await self.lease.claim(ctx, force=self.force):
            return 0
        return await self.run_pass(ctx)

    async def run_pass(self, ctx: AppContext) -> int:
        """The pass itself, with the lease held; returns how many items it handled."""
        raise NotImplementedError
