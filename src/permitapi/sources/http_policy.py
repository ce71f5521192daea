"""How politely and how persistently `PortalHttp` treats one source: timeouts, attempts,
backoff, pacing, response size cap and circuit thresholds (defaults in config, per-source
values in sources/policies.py)."""

from __future__ import annotations

import dataclasses
import random
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

# A shared half-open trial is leased for the attempt's timeouts plus this (pacing waits, body
# download); a trial holder that died frees the circuit for another process after the lease.
TRIAL_MARGIN_SECONDS = 10.0


@dataclass(frozen=True, slots=True)
class SourcePolicy:
    """Politeness and robustness settings for one source (jurisdiction slug)."""

    connect_timeout: float = 5.0
    read_timeout: float = 30.0
    max_attempts: int = 3
    max_concurrency: int = 4
    min_interval_seconds: float = 0.0
    # Token bucket per host: `burst` requests may start at once after an idle period, then
    # starts are paced at `requests_per_second` (0: no rate cap).
    requests_per_second: float = 0.0
    burst: int = 1
    max_response_bytes: int = 8 * 1024 * 1024
    backoff_base_seconds: float = 0.5
    backoff_max_seconds: float = 8.0
    max_retry_wait_seconds: float = 10.0
    circuit_failure_threshold: int = 5
    circuit_cooldown_seconds: float = 30.0

    def __post_init__(self) -> None:
        if self.requests_per_second < 0 or self.burst < 1 or self.max_concurrency < 1:
            raise ValueError(
                "source policy needs requests_per_second >= 0, burst >= 1, max_concurrency >= 1"
            )

    def with_overrides(self, overrides: Mapping[str, Any]) -> SourcePolicy:
        known = {f.name for f in dataclasses.fields(self)}
        unknown = set(overrides) - known
        if unknown:
            raise ValueError(f"unknown source policy fields: {sorted(unknown)}")
        return dataclasses.replace(self, **dict(overrides))

    def backoff(self, attempt: int, server_wait: float) -> float:
        """The pause before attempt `attempt + 1`."""
        ceiling = min(self.backoff_max_seconds, self.backoff_base_seconds * 2 ** (attempt - 1))
        # Full jitter; a server-sent Retry-After is the minimum wait.
        return max(random.uniform(0, ceiling), server_wait)

    @property
    def trial_seconds(self) -> float:
        """The worst-case duration of one attempt: how long a shared half-open trial is
        leased."""
        return self.connect_timeout + self.read_timeout + TRIAL_MARGIN_SECONDS
