"""What every Redis-backed shared limit does when Redis stops answering: a client with short
timeouts, and an outage window. After a failure the caller works per process for
`RETRY_SECONDS` without asking Redis (each request would otherwise wait out a timeout), and
the outage is logged once, when it starts, not on every call."""

from __future__ import annotations

import logging
import time
from typing import Any, Final

import redis.asyncio as redis

TIMEOUT_SECONDS: Final = 0.5
RETRY_SECONDS: Final = 5.0


def client(redis_url: str) -> Any:
    """An asyncio Redis client whose connects and reads give up after TIMEOUT_SECONDS."""
    return redis.from_url(
        redis_url, socket_connect_timeout=TIMEOUT_SECONDS, socket_timeout=TIMEOUT_SECONDS
    )


class RedisOutage:
    """`down` is True for RETRY_SECONDS after `failed`; `meanwhile` says in the warning what
    holds per process until Redis answers (e.g. "rate windows are per process")."""

    def __init__(self, log: logging.Logger, meanwhile: str) -> None:
        self._log = log
        self._meanwhile = meanwhile
        self._until = 0.0

    @property
    def down(self) -> bool:
        return time.monotonic() < self._until

    def failed(self, error: BaseException) -> None:
        if not self.down:
            self._log.warning(
                "Redis did not answer (%s): %s until it does",
                type(error).__name__,
                self._meanwhile,
            )
        self._until = time.monotonic() + RETRY_SECONDS
