"""Request dependencies: the app context and the authenticated caller (REST).

Authentication resolves `X-API-Key` to a `Principal`, applies the per-minute burst window
(except on calls that cost nothing, see `require_principal_unthrottled`) and records the
rate-limit headers every authenticated response carries:

    X-RateLimit-Limit      included units of the month on the endpoint's meter (lookup credits,
                           or discovery searches on discovery endpoints)
    X-RateLimit-Remaining  units left this month (0 once overage accrues)
    X-RateLimit-Reset      Unix time, in seconds, when the meter resets (next UTC month)

Sandbox keys get `X-Sandbox-Mode: true` instead of rate-limit headers. The keyless demo's
admission (status and batch) is `demo/access.py`'s `require_principal_or_demo`. What the key
rules are lives in `account/auth.py`; the headers reach the response through
`web/request_context.py` (transport).
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import Depends, Request
from sqlalchemy.ext.asyncio import AsyncSession

from permitapi.account import auth
from permitapi.account.plans import Meter
from permitapi.account.service import Principal
from permitapi.context import AppContext
from permitapi.errors import TooManyRequests
from permitapi.usage import service as usage
from permitapi.usage.service import MeterState
from permitapi.web.request_context import set_response_header

API_KEY_HEADER = "X-API-Key"


def get_ctx_now(request: Request) -> AppContext:
    ctx: AppContext = request.app.state.ctx
    return ctx


async def get_ctx(request: Request) -> AppContext:
    # async on purpose: FastAPI runs a plain `def` dependency in its thread pool, a thread hop
    # on every request.
    return get_ctx_now(request)


Ctx = Annotated[AppContext, Depends(get_ctx)]


def set_rate_limit_headers(request: Request, state: MeterState) -> None:
    set_response_header(request, "X-RateLimit-Limit", str(state.limit))
    set_response_header(request, "X-RateLimit-Remaining", str(state.remaining))
    set_response_header(request, "X-RateLimit-Reset", str(int(state.reset_at.timestamp())))


def meter_of(request: Request) -> Meter:
    meter = getattr(request.state, "meter", None)
    return meter if isinstance(meter, Meter) else Meter.LOOKUP


async def _authenticate(request: Request, ctx: AppContext, *, throttled: bool) -> Principal:
    # A request may be authenticated twice (an IdempotentRoute authenticates before the
    # endpoint's own dependency runs): the principal and the burst hit are reused, never redone.
    principal = getattr(request.state, "principal", None)
    if not isinstance(principal, Principal):
        principal = await _resolve(request, ctx)
    elif not principal.is_sandbox and getattr(request.state, "headers_meter", None) is not (
        meter_of(request)
    ):
        async with ctx.sessionmaker() as session:
            await _record_headers(request, ctx, session, principal)
    if throttled and not principal.is_sandbox and not getattr(request.state, "burst_hit", False):
        request.state.burst_hit = True
        await usage.check_burst(ctx.burst, principal)
    return principal


async def _resolve(request: Request, ctx: AppContext) -> Principal:
    raw = request.headers.get(API_KEY_HEADER)
    if not raw:
        raise auth.missing_key(f"{API_KEY_HEADER} header")
    async with ctx.sessionmaker() as session:
        principal = await auth.authenticate(session, raw)
        request.state.principal = principal
        if principal.is_sandbox:
            set_response_header(request, "X-Sandbox-Mode", "true")
        else:
            await _record_headers(request, ctx, session, principal)
    return principal


async def _record_headers(
    request: Request, ctx: AppContext, session: AsyncSession, principal: Principal
) -> None:
    meter = meter_of(request)
    state = await usage.meter_state(session, principal, meter, ctx.clock.now())
    set_rate_limit_headers(request, state)
    request.state.headers_meter = meter


async def require_principal(request: Request, ctx: Ctx) -> Principal:
    return await _authenticate(request, ctx, throttled=True)


async def require_principal_unthrottled(request: Request, ctx: Ctx) -> Principal:
    """For calls that cost nothing (usage, operation polling): no burst window."""
    return await _authenticate(request, ctx, throttled=False)


async def optional_principal(request: Request, ctx: Ctx) -> Principal | None:
    """Public endpoints: a key is optional, but a key that is sent must be valid."""
    if request.headers.get(API_KEY_HEADER) is None:
        return None
    return await _authenticate(request, ctx, throttled=True)


async def require_principal_cached(request: Request, ctx: Ctx) -> Principal:
    """The hot-path variant (status lookups): the key comes from the short in-process key
    cache and no meter read is made; the endpoint sets the rate-limit headers from its own
    reservation (`record_meter`), or reads the meter when it refuses before reserving."""
    raw = request.headers.get(API_KEY_HEADER)
    if not raw:
        raise auth.missing_key(f"{API_KEY_HEADER} header")
    principal = await auth.authenticate_cached(ctx.keys, ctx.sessionmaker, raw)
    request.state.principal = principal
    if principal.is_sandbox:
        set_response_header(request, "X-Sandbox-Mode", "true")
        return principal
    try:
        await usage.check_burst(ctx.burst, principal)
    except TooManyRequests:
        await refresh_rate_limit_headers(request, ctx, principal)
        raise
    return principal


async def refresh_rate_limit_headers(
    request: Request, ctx: AppContext, principal: Principal
) -> None:
    """Read the meter and set the rate-limit headers (paths that reserved nothing)."""
    async with ctx.sessionmaker() as session:
        state = await usage.meter_state(session, principal, meter_of(request), ctx.clock.now())
    set_rate_limit_headers(request, state)


async def rate_limit_headers_for_refusal(request: Request) -> None:
    """Every authenticated response carries the rate-limit headers. The cached authentication
    reads no meter (the endpoint sets them from its reservation), so a refusal raised before the
    endpoint ran, such as a FastAPI validation error, reads the meter here (app.py hands this
    to web/problems.py's validation handler)."""
    principal = getattr(request.state, "principal", None)
    if not isinstance(principal, Principal) or principal.is_sandbox:
        return
    recorded: dict[str, Any] = request.scope.get("state", {}).get("response_headers", {})
    if "X-RateLimit-Limit" not in recorded:
        await refresh_rate_limit_headers(request, get_ctx_now(request), principal)


def use_meter(meter: Meter) -> Any:
    """Dependency (list it before auth) selecting which meter the rate-limit headers show."""

    async def _select(request: Request) -> None:
        request.state.meter = meter

    return Depends(_select)


Authenticated = Annotated[Principal, Depends(require_principal)]
AuthenticatedFree = Annotated[Principal, Depends(require_principal_unthrottled)]
AuthenticatedCached = Annotated[Principal, Depends(require_principal_cached)]
MaybeAuthenticated = Annotated[Principal | None, Depends(optional_principal)]


def record_meter(request: Request, state: MeterState) -> None:
    """After a reservation or release, keep the headers in step with the meter."""
    set_rate_limit_headers(request, state)


__all__ = [
    "Authenticated",
    "AuthenticatedCached",
    "AuthenticatedFree",
    "Ctx",
    "MaybeAuthenticated",
    "record_meter",
    "refresh_rate_limit_headers",
    "use_meter",
]
