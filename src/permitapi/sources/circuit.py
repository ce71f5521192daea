"""A circuit breaker per source, so a portal that is down is not hammered by every lookup.

    closed ──(N consecutive failed requests)──▶ open ──(cooldown elapsed)──▶ half-open
      ▲                                                                         │
      └──────────────(the one trial request succeeds)───────────────────────────┤
                        open ◀──(the trial request fails)───────────────────────┘

While open, requests are refused without touching the network (`RetryLater(reason=
"circuit_open")`). In half-open exactly one trial request is let through; others are refused
until it settles. Failures are transient portal failures (timeouts, connection errors, 5xx,
throttling, maintenance and error pages); a login wall or an unparseable page is not an outage
and does not count, and neither does a 404.

A `CircuitBreaker` is one process's state. With `PERMITAPI_REDIS_URL` set, `PortalHttp` decides
by the state every process shares through Redis (`shared_circuit.py`: the same transitions, and
one half-open trial across all processes) and keeps this breaker up to date beside it, so it
decides alone, per process, while Redis does not answer.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum


class CircuitState(StrEnum):
    CLOSED = "closed"
    OPEN = "open"
    HALF_OPEN = "half_open"


@dataclass(frozen=True, slots=True)
class CircuitSnapshot:
    state: CircuitState
    consecutive_failures: int
    retry_in_seconds: float | None  # while open: seconds until a trial request is allowed


class CircuitBreaker:
    def __init__(
        self,
        *,
        failure_threshold: int,
        cooldown_seconds: float,
        monotonic: Callable[[], float] = time.monotonic,
    ) -> None:
        self.failure_threshold = max(1, failure_threshold)
        self.cooldown_seconds = cooldown_seconds
        self._monotonic = monotonic
        self._failures = 0
        self._opened_at: float | None = None
        self._trial_in_flight = False

    @property
    def state(self) -> CircuitState:
        if self._opened_at is None:
            return CircuitState.CLOSED
        if self._monotonic() - self._opened_at >= self.cooldown_seconds:
            return CircuitState.HALF_OPEN
        return CircuitState.OPEN

    def snapshot(self) -> CircuitSnapshot:
        state = self.state
        retry_in = None
        if state is CircuitState.OPEN and self._opened_at is not None:
            retry_in = max(0.0, self._opened_at + self.cooldown_seconds - self._monotonic())
        return CircuitSnapshot(state, self._failures, retry_in)

    def allow(self) -> bool:
        """May a request go out now? In half-open, claims the single trial slot."""
        state = self.state
        if state is CircuitState.CLOSED:
            return True
        if state is CircuitState.HALF_OPEN and not self._trial_in_flight:
            self._trial_in_flight = True
            return True
        return False

    def retry_in(self) -> float:
        snap = self.snapshot()
        return snap.retry_in_seconds if snap.retry_in_seconds is not None else 1.0

    def record_success(self) -> None:
        self._failures = 0
        self._opened_at = None
        self._trial_in_flight = False

    def record_failure(self) -> None:
        self._failures += 1
        if self._trial_in_flight or self._failures >= self.failure_threshold:
            self._opened_at = self._monotonic()
        self._trial_in_flight = False

    def record_neutral(self) -> None:
        """The request ended without telling us about availability (e.g. a login wall)."""
        self._trial_in_flight = False
