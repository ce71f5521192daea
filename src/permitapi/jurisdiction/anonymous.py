"""Admission of keyless jurisdiction requests (POST /jurisdictions/request without a key).

The contract lets anonymous requests count in request_count; unbounded, one client could push
any name up the public list. So a keyless caller gets PERMITAPI_ANONYMOUS_JURISDICTION_REQUESTS_
PER_DAY (10) calls per client address over a rolling 24 hours, counted like the demo's cap
(shared through Redis when it is configured, per process while it is not or is down), and one
vote per address per jurisdiction (jurisdiction.service). Past the cap: 429
`jurisdiction_request_limit_exceeded` with Retry-After.

The address is the demo's (demo/client_address.py: the TCP peer unless it is a trusted proxy)
and is stored only as an HMAC under the service's secret key.
"""

from __future__ import annotations

import hashlib
import hmac
from typing import Final

from starlette.requests import Request

from permitapi.context import AppContext
from permitapi.demo.address_cap import count_call
from permitapi.usage.window_refusal import window_spent

BUCKET: Final = "jurisdiction_request"


def address_hash(address: str, secret: str) -> str:
    return hmac.new(secret.encode(), address.encode(), hashlib.sha256).hexdigest()


async def admit(request: Request, ctx: AppContext) -> str:
    """Count one keyless request for the caller's address: its address hash, or 429."""
    limit = ctx.settings.anonymous_jurisdiction_requests_per_day
    address, verdict = await count_call(request, ctx, BUCKET, limit)
    if not verdict.allowed:
        raise window_spent(
            f"Without an API key, {limit} jurisdiction requests are accepted per address in 24 "
            f"hours. Retry after {verdict.retry_after_seconds} seconds, or send an API key.",
            "jurisdiction_request_limit_exceeded",
            verdict,
        )
    return address_hash(address, ctx.settings.secret_key.get_secret_value())
