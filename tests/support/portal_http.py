"""A PortalHttp for adapter tests against an in-process simulator app.

Retries stay on (they are part of the behaviour under test) but without backoff sleeps, and the
circuit breaker never opens, so one test's injected outage cannot leak into the next test.
"""

from __future__ import annotations

import httpx
from starlette.types import ASGIApp

from permitapi.sources.http import PortalHttp
from permitapi.sources.http_policy import SourcePolicy

TEST_POLICY = SourcePolicy(
    backoff_base_seconds=0.0,
    backoff_max_seconds=0.0,
    circuit_failure_threshold=1_000_000,
)


def in_process_http(app: ASGIApp, base_url: str = "http://portalsim") -> PortalHttp:
    return PortalHttp(
        portal_base_url=base_url,
        transport=httpx.ASGITransport(app=app),
        default_policy=TEST_POLICY,
    )
