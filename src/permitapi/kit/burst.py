"""Per-minute burst windows (and other short windows): moving windows per key.

Redis (through the `limits` library) when PERMITAPI_REDIS_URL is set, so that every API process
shares one window per key. Without Redis the windows live in this process as a timestamp log
per key (`LocalWindows`): `limits`' memory storage expires events in a background task that
holds each key's lock across a thread hop, which stalls requests of busy keys for hundreds of
milliseconds under load (measured with bench/cached_lookup.py).
"""

from __future__ import annotations

import logging
import math
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass

from limits import (
    RateLimitItem,
    RateLimitItemPerHour,
    RateLimitItemPerMinute,
    RateLimitItemPerSecond,
)
from limits.aio.storage import RedisStorage, Storage
from limits.aio.strategies import MovingWindowRateLimiter
from limits.errors import StorageError
from limits.storage import MemoryStorage
from limits.strategies import MovingWindowRateLimiter as SyncMovingWindowRateLimiter

from permitapi.kit import redis_outage

log = logging.getLogger("permitapi.kit.burst")


@dataclass(frozen=True, slots=True)
class WindowVerdict:
    allowed: bool
    retry_after_seconds: int
    remaining: int  # -1 when allowed (not computed)


@dataclass(frozen=True, slots=True)
class CountedVerdict:
    """A window hit with the figures rate-limit headers show, allowed or not."""

    allowed: bool
    remaining: int
    reset_at: float  # Unix time when the oldest counted call leaves the window
    retry_after_seconds: int


def _storage(redis_url: str) -> Storage:
    uri = redis_url.replace("redis://", "async+redis://", 1)
    # Wrapped: every Redis failure surfaces as one StorageError the limiter can degrade on.
    return RedisStorage(
        uri,
        implementation="redispy",
        wrap_exceptions=True,
        socket_connect_timeout=redis_outage.TIMEOUT_SECONDS,
        socket_timeout=redis_outage.TIMEOUT_SECONDS,
    )


class LocalWindows:
    """Moving windows in one process: per (bucket, key) the times of the calls in the window.

    A hit drops the timestamps that left the window and refuses when `limit` remain; the log
    never holds more than `limit` entries per key. Idle keys are swept every SWEEP_EVERY hits.
    """

    SWEEP_EVERY = 10_000

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._logs: dict[tuple[str, ...], tuple[float, deque[float]]] = {}
        self._hits = 0

    def hit(self, identity: tuple[str, ...], limit: int, period: float) -> WindowVerdict:
        now = self._clock()
        entry = self._logs.get(identity)
        log = entry[1] if entry is not None else deque()
        horizon = now - period
        while log and log[0] <= horizon:
            log.popleft()
        self._logs[identity] = (period, log)
        self._hits += 1
        if self._hits % self.SWEEP_EVERY == 0:
            self._sweep(now)
        if len(log) >= limit:
            return WindowVerdict(False, max(1, math.ceil(log[0] + period - now)), 0)
        log.append(now)
        return WindowVerdict(True, 0, limit - len(log))

    def hit_counted(self, identity: tuple[str, ...], limit: int, period: float) -> CountedVerdict:
        verdict = self.hit(identity, limit, period)
        log = self._logs[identity][1]
        now = self._clock()
        oldest = log[0] if log else now
        reset_at = time.time() + max(0.0, oldest + period - now)
        return CountedVerdict(
            verdict.allowed,
            max(0, limit - len(log)),
            reset_at,
            verdict.retry_after_seconds,
        )

    def _sweep(self, now: float) -> None:
        for identity, (period, log) in list(self._logs.items()):
            if not log or log[-1] <= now - period:
                del self._logs[identity]

    def reset(self) -> None:
        self._logs.clear()


class LimitsMemoryWindows:
    """The same interface on `limits`' synchronous MemoryStorage and MovingWindowRateLimiter,
    called directly on the event loop (no thread hop). Kept for the comparison in
    bench/cached_lookup.py (`BENCH_BURST_MEMORY=limits`); see docs/decisions.md."""

    def __init__(self) -> None:
        self._storage = MemoryStorage()
        self._limiter = SyncMovingWindowRateLimiter(self._storage)
        self._items: dict[tuple[int, float], RateLimitItem] = {}

    def hit(self, identity: tuple[str, ...], limit: int, period: float) -> WindowVerdict:
        item = self._items.get((limit, period))
        if item is None:
            item = RateLimitItemPerSecond(limit, int(period))
            self._items[(limit, period)] = item
        if self._limiter.hit(item, *identity):
            return WindowVerdict(True, 0, -1)
        stats = self._limiter.get_window_stats(item, *identity)
        return WindowVerdict(False, max(1, math.ceil(stats.reset_time - time.time())), 0)

    def reset(self) -> None:
        self._storage.reset()


class BurstLimiter:
    def __init__(
        self,
        redis_url: str | None = None,
        namespace: str = "permitapi",
        local: LocalWindows | LimitsMemoryWindows | None = None,
    ) -> None:
        self._local = None if redis_url else (local or LocalWindows())
        self._storage = _storage(redis_url) if redis_url else None
        self._limiter = MovingWindowRateLimiter(self._storage) if self._storage else None
        self._namespace = namespace
        # Redis down: the windows degrade to this process's own (the limits then hold per
        # process, not across processes) until Redis answers again. Logged, never an error.
        self._fallback = LocalWindows()
        self._outage = redis_outage.RedisOutage(log, "rate windows are per process")

    @property
    def degraded(self) -> bool:
        return self._limiter is not None and self._outage.down

    def _redis_failed(self, error: Exception) -> None:
        self._outage.failed(error)

    async def _hit(self, item: RateLimitItem, *identifiers: str) -> WindowVerdict:
        if self._local is not None:
            return self._local.hit(identifiers, item.amount, item.get_expiry())
        if self.degraded:
            return self._fallback.hit(identifiers, item.amount, item.get_expiry())
        try:
            return await self._redis_hit(item, *identifiers)
        except StorageError as error:
            self._redis_failed(error)
            return self._fallback.hit(identifiers, item.amount, item.get_expiry())

    async def _redis_hit(self, item: RateLimitItem, *identifiers: str) -> WindowVerdict:
        assert self._limiter is not None
        allowed = await self._limiter.hit(item, self._namespace, *identifiers)
        if allowed:
            # The window's stats are only needed to refuse; skipping them on the common path
            # halves the limiter's cost on every authenticated request.
            return WindowVerdict(True, 0, -1)
        stats = await self._limiter.get_window_stats(item, self._namespace, *identifiers)
        retry_after = max(1, math.ceil(stats.reset_time - time.time()))
        return WindowVerdict(False, retry_after, stats.remaining)

    async def hit_per_minute(self, key_id: str, per_minute: int) -> WindowVerdict:
        return await self._hit(RateLimitItemPerMinute(per_minute), "burst", key_id)

    async def hit_per_hour(self, key_id: str, bucket: str, per_hour: int) -> WindowVerdict:
        return await self._hit(RateLimitItemPerHour(per_hour), bucket, key_id)

    async def hit_counted(
        self, bucket: str, identity: str, limit: int, period_seconds: int
    ) -> CountedVerdict:
        """A moving-window hit that always reports remaining calls and the reset time (the
        anonymous demo shows them in its rate-limit headers); shared through Redis when set."""
        if self._local is not None:
            if isinstance(self._local, LocalWindows):
                return self._local.hit_counted((bucket, identity), limit, period_seconds)
            raise TypeError("counted windows need LocalWindows or Redis")
        if self.degraded:
            return self._fallback.hit_counted((bucket, identity), limit, period_seconds)
        try:
            return await self._redis_hit_counted(bucket, identity, limit, period_seconds)
        except StorageError as error:
            self._redis_failed(error)
            return self._fallback.hit_counted((bucket, identity), limit, period_seconds)

    async def _redis_hit_counted(
        self, bucket: str, identity: str, limit: int, period_seconds: int
    ) -> CountedVerdict:
        assert self._limiter is not None
        item = RateLimitItemPerSecond(limit, period_seconds)
        allowed = await self._limiter.hit(item, self._namespace, bucket, identity)
        stats = await self._limiter.get_window_stats(item, self._namespace, bucket, identity)
        retry_after = 0 if allowed else max(1, math.ceil(stats.reset_time - time.time()))
        return CountedVerdict(allowed, stats.remaining, stats.reset_time, retry_after)

    async def reset(self) -> None:
        if self._local is not None:
            self._local.reset()
        if self._storage is not None:
            await self._storage.reset()
