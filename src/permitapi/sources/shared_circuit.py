"""Circuit-breaker state shared by every process: per source, one Redis hash, so a portal that
is down is refused by all API processes and workers once their failures together open it.

`{namespace}:circuit:{source}` holds `failures` (consecutive failed requests, all processes
together), `opened_at` (ms, Redis's clock, set while open or half-open) and, while a trial is
out, `trial_until` (ms) and `trial_owner` (the request holding it). The transitions are those
of `circuit.CircuitBreaker`, each in one script on Redis's own clock (processes' clocks may
disagree):

- allow: closed → yes; open (cooldown not over) → no, with the time left; half-open → yes for
  exactly one request across all processes (it claims the trial until `trial_until`, the
  request's worst-case duration, so a trial holder that crashed cannot wedge the circuit),
  no for every other request until the trial settles or lapses.
- failure: counts; at the threshold (or when already open or half-open) opens, again from now,
  and ends any trial. success: deletes the hash (closed). neutral: releases the trial when the
  caller holds it.

The hash expires an hour after its last write, so a source nobody asks about forgets old
failures. When Redis does not answer, every method returns None and the caller decides with
its own per-process breaker; a warning is logged once and Redis is tried again after 5 seconds.
"""

from __future__ import annotations

import logging
import math
from dataclasses import dataclass
from typing import Any, Final

from redis.exceptions import RedisError

from permitapi.kit import redis_outage
from permitapi.sources.circuit import CircuitSnapshot, CircuitState

log = logging.getLogger("permitapi.sources.shared_circuit")

# How long the hash outlives its last write (beyond the cooldown and a trial).
STATE_TTL_MS: Final = 3_600_000
_STATES: Final = (CircuitState.CLOSED, CircuitState.HALF_OPEN, CircuitState.OPEN)

_NOW: Final = """
local clock = redis.call('TIME')
local now = tonumber(clock[1]) * 1000 + math.floor(tonumber(clock[2]) / 1000)
"""
# KEYS[1]: the source's hash. ARGV: cooldown (ms), trial lease (ms), token, hash TTL (ms).
# Returns {allowed 0/1, state 0 closed / 1 half-open / 2 open, ms until a trial (-1: none)}.
_ALLOW: Final = (
    _NOW
    + """
local opened = tonumber(redis.call('HGET', KEYS[1], 'opened_at'))
if not opened then return {1, 0, -1} end
local cooldown = tonumber(ARGV[1])
if now - opened < cooldown then return {0, 2, opened + cooldown - now} end
local trial_until = tonumber(redis.call('HGET', KEYS[1], 'trial_until'))
if trial_until and now < trial_until then return {0, 1, -1} end
redis.call('HSET', KEYS[1], 'trial_until', now + tonumber(ARGV[2]), 'trial_owner', ARGV[3])
redis.call('PEXPIRE', KEYS[1], ARGV[4])
return {1, 1, -1}
"""
)
# KEYS[1]: the source's hash. ARGV: failure threshold, hash TTL (ms). Returns the failures.
_FAILURE: Final = (
    _NOW
    + """
local failures = redis.call('HINCRBY', KEYS[1], 'failures', 1)
if failures >= tonumber(ARGV[1]) or redis.call('HEXISTS', KEYS[1], 'opened_at') == 1 then
  redis.call('HSET', KEYS[1], 'opened_at', now)
  redis.call('HDEL', KEYS[1], 'trial_until', 'trial_owner')
end
redis.call('PEXPIRE', KEYS[1], ARGV[2])
return failures
"""
)
# KEYS[1]: the source's hash. ARGV: token. Returns 1 when the trial was released.
_RELEASE: Final = """
if redis.call('HGET', KEYS[1], 'trial_owner') == ARGV[1] then
  redis.call('HDEL', KEYS[1], 'trial_until', 'trial_owner')
  return 1
end
return 0
"""
# KEYS[1]: the source's hash. ARGV: cooldown (ms).
# Returns {state 0 closed / 1 half-open / 2 open, failures, ms until a trial (-1: none)}.
_SNAPSHOT: Final = (
    _NOW
    + """
local failures = tonumber(redis.call('HGET', KEYS[1], 'failures') or 0)
local opened = tonumber(redis.call('HGET', KEYS[1], 'opened_at'))
if not opened then return {0, failures, -1} end
local cooldown = tonumber(ARGV[1])
if now - opened < cooldown then return {2, failures, opened + cooldown - now} end
return {1, failures, -1}
"""
)


@dataclass(frozen=True, slots=True)
class Admission:
    """Redis's answer to "may this request go out?"."""

    allowed: bool
    trial: bool  # the request holds the single half-open trial of all processes
    retry_in_seconds: float  # when refused: seconds until a request may be allowed again


class SharedCircuits:
    def __init__(self, redis_url: str, namespace: str) -> None:
        self._client: Any = redis_outage.client(redis_url)
        self._allow: Any = self._client.register_script(_ALLOW)
        self._failure: Any = self._client.register_script(_FAILURE)
        self._release: Any = self._client.register_script(_RELEASE)
        self._snapshot: Any = self._client.register_script(_SNAPSHOT)
        self._namespace = namespace
        self._outage = redis_outage.RedisOutage(log, "circuit breakers are per process")

    @property
    def available(self) -> bool:
        return not self._outage.down

    async def allow(
        self, source: str, *, cooldown_seconds: float, trial_seconds: float, token: str
    ) -> Admission | None:
        """May a request on `source` go out now? In half-open, claims the trial for `token`
        for at most `trial_seconds`. None when Redis did not answer."""
        cooldown_ms = _ms(cooldown_seconds)
        trial_ms = max(1, _ms(trial_seconds))
        answer = await self._run(
            self._allow, source, [cooldown_ms, trial_ms, token, _ttl(cooldown_ms, trial_ms)]
        )
        if answer is None:
            return None
        allowed, state, retry_in_ms = (int(part) for part in answer)
        return Admission(
            allowed=bool(allowed),
            trial=bool(allowed) and _STATES[state] is CircuitState.HALF_OPEN,
            retry_in_seconds=retry_in_ms / 1000 if retry_in_ms >= 0 else 1.0,
        )

    async def record_failure(
        self, source: str, *, failure_threshold: int, cooldown_seconds: float, trial_seconds: float
    ) -> int | None:
        """Count a failed request; opens the circuit at the threshold or after a failed
        trial. The consecutive failures of all processes, or None when Redis did not answer."""
        ttl = _ttl(_ms(cooldown_seconds), _ms(trial_seconds))
        answer = await self._run(self._failure, source, [max(1, failure_threshold), ttl])
        return None if answer is None else int(answer)

    async def record_success(self, source: str) -> bool | None:
        """Close the circuit for every process. None when Redis did not answer."""
        if not self.available:
            return None
        try:
            await self._client.delete(self._key(source))
        except (RedisError, OSError) as error:
            self._outage.failed(error)
            return None
        return True

    async def release_trial(self, source: str, token: str) -> bool | None:
        """The trial request of `token` ended without telling us about availability: let the
        next request be the trial. None when Redis did not answer."""
        answer = await self._run(self._release, source, [token])
        return None if answer is None else bool(answer)

    async def snapshot(self, source: str, *, cooldown_seconds: float) -> CircuitSnapshot | None:
        answer = await self._run(self._snapshot, source, [_ms(cooldown_seconds)])
        if answer is None:
            return None
        state, failures, retry_in_ms = (int(part) for part in answer)
        return CircuitSnapshot(
            _STATES[state], failures, retry_in_ms / 1000 if retry_in_ms >= 0 else None
        )

    async def aclose(self) -> None:
        await self._client.aclose()

    def _key(self, source: str) -> str:
        return f"{self._namespace}:circuit:{source}"

    async def _run(self, script: Any, source: str, args: list[Any]) -> Any:
        if not self.available:
            return None
        try:
            return await script(keys=[self._key(source)], args=args)
        except (RedisError, OSError) as error:
            self._outage.failed(error)
            return None


def _ms(seconds: float) -> int:
    return math.ceil(seconds * 1000)


def _ttl(cooldown_ms: int, trial_ms: int) -> int:
    return cooldown_ms + trial_ms + STATE_TTL_MS
