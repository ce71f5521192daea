"""Politeness owed to one portal host: a concurrency cap, a token bucket (shared by every
process through Redis when configured) and a minimum interval between request starts."""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator

from permitapi.sources.http_policy import SourcePolicy
from permitapi.sources.shared_pace import SharedPacer


class TokenBucket:
    """`burst` tokens, refilled continuously at `rate` per second; a request start takes one."""

    def __init__(self, rate: float, burst: int) -> None:
        self._rate = rate
        self._capacity = float(burst)
        self._tokens = self._capacity
        self._updated = time.monotonic()

    def wait(self, now: float) -> float:
        """Seconds until a token is available (0 when one is)."""
        self._refill(now)
        return 0.0 if self._tokens >= 1 else (1 - self._tokens) / self._rate

    def take(self, now: float) -> None:
        self._refill(now)
        self._tokens -= 1

    def _refill(self, now: float) -> None:
        self._tokens = min(self._capacity, self._tokens + (now - self._updated) * self._rate)
        self._updated = now


class HostGate:
    """Politeness owed to one host: at most `max_concurrency` requests in flight, starts paced
    by a token bucket (`requests_per_second`, `burst`) and at least `min_interval_seconds`
    apart. Waiters start in arrival order."""

    def __init__(
        self, policy: SourcePolicy, host: str = "", shared: SharedPacer | None = None
    ) -> None:
        self._host = host
        # The rate budget shared with every other process (Redis), when configured; the local
        # bucket paces only while Redis does not answer.
        self._shared = shared if policy.requests_per_second > 0 else None
        self._rate = policy.requests_per_second
        self._burst = policy.burst
        self._semaphore = asyncio.Semaphore(policy.max_concurrency)
        self._min_interval = policy.min_interval_seconds
        self._bucket = (
            TokenBucket(policy.requests_per_second, policy.burst)
            if policy.requests_per_second > 0
            else None
        )
        self._lock = asyncio.Lock()
        self._next_start = 0.0

    @contextlib.asynccontextmanager
    async def slot(self) -> AsyncIterator[None]:
        async with self._semaphore:
            if self._bucket is not None or self._min_interval > 0:
                # Waiting while holding the (FIFO) lock is what keeps arrival order: a newcomer
                # cannot take the token the first waiter is sleeping for.
                async with self._lock:
                    await self._pace()
            yield

    async def _pace(self) -> None:
        # Nobody else takes tokens meanwhile (the lock): after this wait one is there. A wake-up
        # a hair early leaves the bucket a hair below zero, which only delays the next start.
        wait = self._wait(time.monotonic())
        if wait > 0:
            await asyncio.sleep(wait)
        if self._shared is not None and await self._shared_turn():
            self._next_start = time.monotonic() + self._min_interval
            return
        now = time.monotonic()
        if self._bucket is not None:
            self._bucket.take(now)
        self._next_start = now + self._min_interval

    async def _shared_turn(self) -> bool:
        """Wait for the shared bucket's token; False when Redis is away (pace locally)."""
        assert self._shared is not None
        while True:
            wait = await self._shared.wait_seconds(self._host, self._rate, self._burst)
            if wait is None:
                return False
            if wait <= 0:
                return True
            await asyncio.sleep(wait)

    def _wait(self, now: float) -> float:
        local_bucket = self._bucket is not None and (
            self._shared is None or not self._shared.available
        )
        bucket_wait = self._bucket.wait(now) if local_bucket and self._bucket else 0.0
        return max(bucket_wait, self._next_start - now)
