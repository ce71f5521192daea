"""A politeness budget shared by every process: per portal host, one token bucket kept in
Redis (GCRA), so N API processes and workers together start no more requests than one would.

Each request start asks Redis, in one script, whether the host's bucket has a token; the script
uses Redis's own clock (processes' clocks may disagree) and answers how long to wait otherwise.
When Redis does not answer, the caller paces with its own per-process bucket and a warning is
logged: politeness then holds per process, as without Redis, and no portal call fails for it.
"""

from __future__ import annotations

import logging
import math
from typing import Any, Final

from redis.exceptions import RedisError

from permitapi.kit import redis_outage

log = logging.getLogger("permitapi.sources.shared_pace")

# KEYS[1]: the host's key. ARGV: emission interval (µs), burst tolerance (µs).
# Returns 0 when the start is allowed (and recorded), else the microseconds to wait.
_GCRA: Final = """
local now_parts = redis.call('TIME')
local now = tonumber(now_parts[1]) * 1000000 + tonumber(now_parts[2])
local interval = tonumber(ARGV[1])
local tolerance = tonumber(ARGV[2])
local tat = tonumber(redis.call('GET', KEYS[1]) or now)
if tat < now then tat = now end
local allow_at = tat - tolerance
if now < allow_at then return allow_at - now end
local new_tat = tat + interval
redis.call('SET', KEYS[1], tostring(new_tat), 'PX', math.ceil((new_tat - now) / 1000) + 1000)
return 0
"""


class SharedPacer:
    def __init__(self, redis_url: str, namespace: str) -> None:
        self._client: Any = redis_outage.client(redis_url)
        self._script: Any = self._client.register_script(_GCRA)
        self._namespace = namespace
        self._outage = redis_outage.RedisOutage(log, "portal politeness is per process")

    @property
    def available(self) -> bool:
        return not self._outage.down

    async def wait_seconds(self, host: str, rate: float, burst: int) -> float | None:
        """0 when a start on `host` is allowed now (and counted), the seconds to wait
        otherwise, or None when Redis did not answer (pace locally)."""
        if not self.available:
            return None
        interval = 1_000_000 / rate
        tolerance = interval * (burst - 1)
        key = f"{self._namespace}:pace:{host}"
        try:
            wait_us = await self._script(keys=[key], args=[math.ceil(interval), int(tolerance)])
        except (RedisError, OSError) as error:
            self._outage.failed(error)
            return None
        return float(wait_us) / 1_000_000

    async def aclose(self) -> None:
        await self._client.aclose()
