"""Who is calling a tool: the REST authentication, read from the tool server's HTTP request.

- A key comes as `Authorization: Bearer <key>` or `X-API-Key: <key>` (both may be sent only if
  they agree). It is resolved exactly as REST resolves `X-API-Key` (`account.auth.authenticate`): an
  unknown, malformed or deactivated key is `invalid_api_key`.
- Each tool has the access of its REST twin: `PUBLIC` (list_jurisdictions: no key needed, none
  looked at), `THROTTLED` (lookups, details, resolution, discovery: the per-minute burst window
  counts the call, as on REST) and `UNTHROTTLED` (watches: no credits and no burst window, as on
  REST).
- Without a key, `THROTTLED` tools are the keyless demo: the same admission as REST's keyless
  status and batch calls (`permitapi.demo.access.admit`: the demo's sandbox principal and its
  per-address daily cap, `demo_limit_exceeded` past it). `UNTHROTTLED` tools (watches) need a
  live key: `invalid_api_key`.
- As on REST, authenticated responses carry the rate-limit headers of the tool's meter (sandbox
  keys `X-Sandbox-Mode: true`, the demo `X-Demo-Mode: true` and its cap): they are set on the
  HTTP response of the `tools/call` POST.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

from starlette.requests import Request

from permitapi.account import auth
from permitapi.account.plans import Meter
from permitapi.account.service import Principal
from permitapi.context import AppContext
from permitapi.demo import access as demo
from permitapi.errors import Unauthorized
from permitapi.usage import service as usage
from permitapi.usage.auth_dependencies import set_rate_limit_headers
from permitapi.web.request_context import set_response_header


class Access(Enum):
    PUBLIC = "public"
    THROTTLED = "throttled"
    UNTHROTTLED = "unthrottled"


@dataclass(frozen=True, slots=True)
class Caller:
    """The principal a tool runs as. `principal` is None only for PUBLIC tools called without a
    key; `keyless` marks the demo principal."""

    principal: Principal | None
    keyless: bool = False


def presented_key(request: Request) -> str | None:
    """The key the request carries, or None. Raises invalid_api_key for a malformed
    Authorization header or two different keys."""
    header_key = request.headers.get("x-api-key")
    bearer: str | None = None
    authorization = request.headers.get("authorization")
    if authorization is not None:
        scheme, _, token = authorization.strip().partition(" ")
        if scheme.lower() != "bearer" or not token.strip():
            raise Unauthorized(
                "The Authorization header must be 'Bearer <API key>'.", code="invalid_api_key"
            )
        bearer = token.strip()
    if header_key is not None and bearer is not None and header_key.strip() != bearer:
        raise Unauthorized(
            "Authorization and X-API-Key carry different keys; send one.", code="invalid_api_key"
        )
    return header_key if header_key is not None else bearer


async def admit_keyless(request: Request, ctx: AppContext) -> Principal:
    """The single hook of the keyless demo (issue 13's `permitapi.demo.access`): counts one
    demo call for the client address and answers the demo's sandbox principal, or raises 429
    demo_limit_exceeded."""
    return await demo.admit(request, ctx)


async def authenticate(
    request: Request, ctx: AppContext, access: Access, meter: Meter = Meter.LOOKUP
) -> Caller:
    if access is Access.PUBLIC:
        return Caller(None)
    raw = presented_key(request)
    if raw is None:
        if access is Access.UNTHROTTLED:
            raise Unauthorized(
                "This tool needs a live API key (sk_live_...): send it as 'Authorization: "
                "Bearer <key>' or 'X-API-Key'. Without a key only the read tools answer, from "
                "the demo dataset.",
                code="invalid_api_key",
            )
        return Caller(await admit_keyless(request, ctx), keyless=True)
    if not raw.strip():
        raise auth.missing_key("API key")
    async with ctx.sessionmaker() as session:
        principal = await auth.authenticate(session, raw)
        if principal.is_sandbox:
            set_response_header(request, "X-Sandbox-Mode", "true")
        else:
            state = await usage.meter_state(session, principal, meter, ctx.clock.now())
            set_rate_limit_headers(request, state)
    if access is Access.THROTTLED and not principal.is_sandbox:
        await usage.check_burst(ctx.burst, principal)
    return Caller(principal)
