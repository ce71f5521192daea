"""Admission of keyless callers to the demo: the demo's principal, its cap, its headers.

A keyless status or batch call is answered like a sandbox key's (the same curated dataset, no
portal fetch, nothing metered) with `X-Demo-Mode: true` and rate-limit headers that show the
demo cap: PERMITAPI_DEMO_CALLS_PER_DAY (30) per client address over a rolling 24 hours. Past
it: 429 `demo_limit_exceeded` with Retry-After. A batch is one call.

`require_principal_or_demo` is the status and batch routes' dependency: a key is
authenticated as everywhere (usage/auth_dependencies.py), a keyless call is admitted here.
"""

from __future__ import annotations

from typing import Annotated, Final

from fastapi import Depends
from starlette.requests import Request

from permitapi.account.plans import PLANS, PlanName
from permitapi.account.service import Principal
from permitapi.context import AppContext
from permitapi.demo.address_cap import count_call
from permitapi.usage.auth_dependencies import API_KEY_HEADER, Ctx, require_principal_cached
from permitapi.usage.window_refusal import window_spent

DEMO_HEADER: Final = "X-Demo-Mode"
BUCKET: Final = "demo"

# The demo acts as a free sandbox key that belongs to nobody: force_refresh is refused as for
# any free key, and every answer comes from the curated dataset.
DEMO_PRINCIPAL: Final = Principal(
    api_key_id="demo",
    account_id="demo",
    key_hash="demo",
    is_sandbox=True,
    plan=PLANS[PlanName.FREE],
    discovery_addon=False,
    overage_enabled=False,
    custom_lookup_limit=None,
)


def _set(request: Request, name: str, value: str) -> None:
    state = request.scope.setdefault("state", {})
    state.setdefault("response_headers", {})[name] = value


async def admit(request: Request, ctx: AppContext) -> Principal:
    """Count one demo call for the caller's address; the demo principal, or 429."""
    limit = ctx.settings.demo_calls_per_day
    _, verdict = await count_call(request, ctx, BUCKET, limit)
    headers = {
        DEMO_HEADER: "true",
        "X-RateLimit-Limit": str(limit),
        "X-RateLimit-Remaining": str(verdict.remaining),
        "X-RateLimit-Reset": str(int(verdict.reset_at)),
    }
    for name, value in headers.items():
        _set(request, name, value)
    if not verdict.allowed:
        raise window_spent(
            f"The keyless demo allows {limit} calls per address in 24 hours. Retry after "
            f"{verdict.retry_after_seconds} seconds, or use an API key.",
            "demo_limit_exceeded",
            verdict,
            headers,
        )
    return DEMO_PRINCIPAL


async def require_principal_or_demo(request: Request, ctx: Ctx) -> Principal:
    """Status and batch: with a key, `require_principal_cached`; without one, the anonymous
    demo (`admit`: the sandbox's dataset, a per-address daily cap)."""
    if request.headers.get(API_KEY_HEADER) is None:
        principal = await admit(request, ctx)
        request.state.principal = principal
        return principal
    return await require_principal_cached(request, ctx)


AuthenticatedOrDemo = Annotated[Principal, Depends(require_principal_or_demo)]
