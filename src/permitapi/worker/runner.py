"""Runs job sources. Each source claims due rows (with a lease), runs them and reports how many
it handled; a crashed worker's leases expire and another worker takes over.

Every schedule and job source is listed in `composition.job_sources()`, the one place they are
named; this module only runs what it is given. Each source runs in its own loop, so a long
operation refresh never delays a webhook delivery.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator
from typing import Protocol, runtime_checkable

from permitapi.context import AppContext

log = logging.getLogger("permitapi.worker")


class JobSource(Protocol):
    name: str

    async def run_due(self, ctx: AppContext) -> int:
        """Claim and run due jobs; return how many ran. Must not raise for a job's failure."""
        ...


@runtime_checkable
class PolledSource(Protocol):
    """A source with its own idle interval (default: the worker's poll interval)."""

    def poll_interval(self, ctx: AppContext) -> float: ...


@runtime_checkable
class ClosableSource(Protocol):
    async def aclose(self) -> None: ...


class Worker:
    def __init__(self, ctx: AppContext, sources: list[JobSource]) -> None:
        self.ctx = ctx
        self.sources = sources
        self._stopping = asyncio.Event()
        # Sources whose pass raised (logged, and the loop goes on): `permitapi jobs run` exits
        # non-zero on them, so an operator's "run it now" does not report a crash as done.
        self.failed: list[str] = []

    def stop(self) -> None:
        self._stopping.set()

    async def _run_source(self, source: JobSource) -> int:
        try:
            return await source.run_due(self.ctx)
        except Exception:
            log.exception("job source %s failed", source.name)
            self.failed.append(source.name)
            return 0

    async def run_once(self) -> int:
        handled = 0
        for source in self.sources:
            handled += await self._run_source(source)
        return handled

    async def _loop(self, source: JobSource) -> None:
        interval = (
            source.poll_interval(self.ctx)
            if isinstance(source, PolledSource)
            else self.ctx.settings.worker_poll_interval_seconds
        )
        while not self._stopping.is_set():
            if await self._run_source(source) == 0:
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._stopping.wait(), timeout=interval)

    async def run_forever(self) -> None:
        try:
            await asyncio.gather(*(self._loop(source) for source in self.sources))
        finally:
            await self.aclose()

    async def aclose(self) -> None:
        for source in self.sources:
            if isinstance(source, ClosableSource):
                await source.aclose()


@contextlib.asynccontextmanager
async def in_process_worker(ctx: AppContext, sources: list[JobSource]) -> AsyncIterator[Worker]:
    """Runs the worker inside the API process (dev mode)."""
    worker = Worker(ctx, sources)
    task = asyncio.create_task(worker.run_forever(), name="permitapi-worker")
    try:
        yield worker
    finally:
        worker.stop()
        await task
