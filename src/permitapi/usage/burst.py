"""Per-minute burst windows (and other short windows) on the `limits` library.

Memory storage by default (one process); Redis when PERMITAPI_REDIS_URL is set, so that every
API process shares one window per key.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass

from limits import RateLimitItem, RateLimitItemPerHour, RateLimitItemPerMinute
from limits.aio.storage import MemoryStorage, RedisStorage, Storage
from limits.aio.strategies import MovingWindowRateLimiter


@dataclass(frozen=True, slots=True)
class WindowVerdict:
    allowed: bool
    retry_after_seconds: int
    remaining: int  # -1 when allowed (not computed)


def _storage(redis_url: str | None) -> Storage:
    if redis_url:
        uri = redis_url.replace("redis://", "async+redis://", 1)
        return RedisStorage(uri, implementation="redispy")
    return MemoryStorage()


class BurstLimiter:
    def __init__(self, redis_url: str | None = None, namespace: str = "permitapi") -> None:
        self._storage = _storage(redis_url)
        self._limiter = MovingWindowRateLimiter(self._storage)
        self._namespace = namespace

    async def _hit(self, item: RateLimitItem, *identifiers: str) -> WindowVerdict:
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

    async def reset(self) -> None:
        await self._storage.reset()
