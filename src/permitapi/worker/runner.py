"""Runs job sources in a loop. Each source claims due rows (with a lease), runs them and
reports how many it handled; a crashed worker's leases expire and another worker takes over.

Every schedule and job source is listed in `job_sources()`, the one place they are named.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator
from typing import Protocol

from permitapi.context import AppContext
from permitapi.idempotency.jobs import IdempotencyPurge

log = logging.getLogger("permitapi.worker")


class JobSource(Protocol):
    name: str

    async def run_due(self, ctx: AppContext) -> int:
        """Claim and run due jobs; return how many ran. Must not raise for a job's failure."""
        ...


def job_sources() -> list[JobSource]:
    """Every job source of the service, in the order the loop visits them."""
    from permitapi.operation.jobs import OperationJobs  # jobs import services; keep lazy

    return [IdempotencyPurge(), OperationJobs()]


class Worker:
    def __init__(self, ctx: AppContext, sources: list[JobSource] | None = None) -> None:
        self.ctx = ctx
        self.sources = job_sources() if sources is None else sources
        self._stopping = asyncio.Event()

    def stop(self) -> None:
        self._stopping.set()

    async def run_once(self) -> int:
        handled = 0
        for source in self.sources:
            try:
                handled += await source.run_due(self.ctx)
            except Exception:
                log.exception("job source %s failed", source.name)
        return handled

    async def run_forever(self) -> None:
        interval = self.ctx.settings.worker_poll_interval_seconds
        while not self._stopping.is_set():
            handled = await self.run_once()
            if handled == 0:
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._stopping.wait(), timeout=interval)


@contextlib.asynccontextmanager
async def in_process_worker(ctx: AppContext) -> AsyncIterator[Worker]:
    """Runs the worker inside the API process (dev mode)."""
    worker = Worker(ctx)
    task = asyncio.create_task(worker.run_forever(), name="permitapi-worker")
    try:
        yield worker
    finally:
        worker.stop()
        await task
