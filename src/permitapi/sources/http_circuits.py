"""The circuit breakers `PortalHttp` decides by: one per source in this process, and the state
every process shares through Redis when `shared_circuits` is given (see circuit.py and
shared_circuit.py).

Outcomes always go to this process's breaker too, so it is ready to decide when Redis stops
answering; while Redis answers, Redis decides.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Coroutine
from typing import Any

from permitapi.sources.circuit import CircuitBreaker, CircuitSnapshot
from permitapi.sources.http_policy import SourcePolicy
from permitapi.sources.shared_circuit import Admission, SharedCircuits


class SourceCircuits:
    def __init__(
        self,
        policy_of: Callable[[str], SourcePolicy],
        shared: SharedCircuits | None = None,
        monotonic: Callable[[], float] = time.monotonic,
    ) -> None:
        self._policy_of = policy_of
        self._shared = shared
        self._monotonic = monotonic
        self._breakers: dict[str, CircuitBreaker] = {}
        # Shared-trial releases still running for requests that were cancelled.
        self._releases: set[asyncio.Task[Any]] = set()

    def breaker(self, source: str) -> CircuitBreaker:
        """This process's own breaker of one source."""
        breaker = self._breakers.get(source)
        if breaker is None:
            policy = self._policy_of(source)
            breaker = CircuitBreaker(
                failure_threshold=policy.circuit_failure_threshold,
                cooldown_seconds=policy.circuit_cooldown_seconds,
                monotonic=self._monotonic,
            )
            self._breakers[source] = breaker
        return breaker

    async def state(self, source: str) -> CircuitSnapshot:
        """The shared state when configured and answering, else this process's own."""
        if self._shared is not None:
            policy = self._policy_of(source)
            shared = await self._shared.snapshot(
                source, cooldown_seconds=policy.circuit_cooldown_seconds
            )
            if shared is not None:
                return shared
        return self.breaker(source).snapshot()

    async def admit(self, source: str, token: str) -> Admission:
        """May a request go out now? `token` names the request's claim on a shared trial."""
        breaker = self.breaker(source)
        if self._shared is not None:
            policy = self._policy_of(source)
            shared = await self._shared.allow(
                source,
                cooldown_seconds=policy.circuit_cooldown_seconds,
                trial_seconds=policy.trial_seconds,
                token=token,
            )
            if shared is not None:
                return shared
        if breaker.allow():
            return Admission(allowed=True, trial=False, retry_in_seconds=0.0)
        return Admission(allowed=False, trial=False, retry_in_seconds=breaker.retry_in())

    async def record_success(self, source: str) -> None:
        self.breaker(source).record_success()
        if self._shared is not None:
            await self._shared.record_success(source)

    async def record_failure(self, source: str) -> None:
        """A transient failure: it counts towards opening the circuit."""
        self.breaker(source).record_failure()
        if self._shared is not None:
            policy = self._policy_of(source)
            await self._shared.record_failure(
                source,
                failure_threshold=policy.circuit_failure_threshold,
                cooldown_seconds=policy.circuit_cooldown_seconds,
                trial_seconds=policy.trial_seconds,
            )

    async def record_neutral(self, source: str, admission: Admission, token: str) -> None:
        """An outcome that says nothing about availability (Blocked, PortalChanged)."""
        self.breaker(source).record_neutral()
        if admission.trial:
            await self._release_trial(source, token)

    def record_cancelled(self, source: str, admission: Admission, token: str) -> None:
        """A cancelled request: an await here could be cancelled again, so the shared trial is
        released in the background."""
        self.breaker(source).record_neutral()
        if admission.trial:
            self._in_background(self._release_trial(source, token))

    async def _release_trial(self, source: str, token: str) -> None:
        if self._shared is not None:
            await self._shared.release_trial(source, token)

    def _in_background(self, work: Coroutine[Any, Any, None]) -> None:
        task = asyncio.get_running_loop().create_task(work)
        self._releases.add(task)
        task.add_done_callback(self._releases.discard)

    async def aclose(self) -> None:
        if self._releases:
            await asyncio.gather(*self._releases, return_exceptions=True)
        if self._shared is not None:
            await self._shared.aclose()
