"""The 429 of a spent window (burst, force_refresh, the demo and keyless caps): the wait is
given twice, as Retry-After for HTTP clients and as `retry_after_seconds` in the problem body
for clients that only read bodies (MCP)."""

from __future__ import annotations

from collections.abc import Mapping

from permitapi.errors import TooManyRequests
from permitapi.kit.burst import CountedVerdict, WindowVerdict


def window_spent(
    detail: str,
    code: str,
    verdict: WindowVerdict | CountedVerdict,
    headers: Mapping[str, str] | None = None,
) -> TooManyRequests:
    wait = verdict.retry_after_seconds
    return TooManyRequests(
        detail,
        code=code,
        extra={"retry_after_seconds": wait},
        headers={**(headers or {}), "Retry-After": str(wait)},
    )
