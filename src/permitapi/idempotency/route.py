"""Idempotency-Key over HTTP: `IdempotentRoute`, applied per route with `idempotent_post`.

    @idempotent_post(router, "/webhooks", response_model=Webhook, responses=...)
    async def register_webhook(...): ...

The route wraps FastAPI's own handler, so the endpoint stays an ordinary thin router. With the
header absent the endpoint runs as usual. With it, the caller is authenticated first when it
sends X-API-Key (a deactivated key never gets a replay; the endpoint's own auth dependency then
reuses that principal), the request is claimed, run, and its 2xx response stored; a repeat is
answered from storage with `Idempotent-Replayed: true`. Scope: the API key (its hash), or for
anonymous callers the client address.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Coroutine
from typing import Any

from fastapi import APIRouter, Request, Response
from fastapi.routing import APIRoute

from permitapi.context import AppContext
from permitapi.demo.client_address import client_address
from permitapi.idempotency import service
from permitapi.idempotency.service import Claim, StoredResponse
from permitapi.usage.auth_dependencies import optional_principal
from permitapi.web.openapi import problem_responses

log = logging.getLogger("permitapi.idempotency")

REPLAYED_HEADER = "Idempotent-Replayed"
# Headers that describe this exchange rather than the stored result: never stored or replayed
# (a replay gets its own request id and current rate-limit headers).
_NOT_STORED = {"content-length", "date", "server", "x-request-id", "retry-after"}
_NOT_STORED_PREFIXES = ("x-ratelimit-",)

_HEADER_PARAMETER = {
    "name": service.HEADER,
    "in": "header",
    "required": False,
    "description": (
        "Any unique string, 1-255 printable ASCII characters, bare or as a quoted sf-string. "
        "The first 2xx response is stored for 24 hours and replayed for a repeat with the same "
        "key and body (header `Idempotent-Replayed: true`); scoped to the API key, or to the "
        "client address without one."
    ),
    "schema": {"type": "string", "minLength": 1, "maxLength": 255},
}

Handler = Callable[[Request], Coroutine[Any, Any, Response]]


class IdempotentRoute(APIRoute):
    """A POST route honouring `Idempotency-Key` (documented in its OpenAPI operation)."""

    def __init__(self, path: str, endpoint: Callable[..., Any], **kwargs: Any) -> None:
        kwargs["responses"] = {
            **problem_responses(400, 409, 422),
            **(kwargs.get("responses") or {}),
        }
        extra = dict(kwargs.get("openapi_extra") or {})
        extra["parameters"] = [*extra.get("parameters", []), _HEADER_PARAMETER]
        kwargs["openapi_extra"] = extra
        super().__init__(path, endpoint, **kwargs)

    def get_route_handler(self) -> Handler:
        run = super().get_route_handler()

        async def handle(request: Request) -> Response:
            values = request.headers.getlist(service.HEADER)
            if not values:
                return await run(request)
            return await _run_idempotently(request, values, run)

        return handle


def idempotent_post(router: APIRouter, path: str, **kwargs: Any) -> Callable[[Any], Any]:
    """`@router.post(path, ...)` with Idempotency-Key support."""

    def register(endpoint: Callable[..., Any]) -> Callable[..., Any]:
        router.add_api_route(
            path, endpoint, methods=["POST"], route_class_override=IdempotentRoute, **kwargs
        )
        return endpoint

    return register


async def _run_idempotently(request: Request, values: list[str], run: Handler) -> Response:
    key = service.parse_key(values)
    ctx: AppContext = request.app.state.ctx
    principal = await optional_principal(request, ctx)
    # Keyless callers are told apart by address as the demo does: behind a trusted proxy the
    # peer is the proxy, shared by every client.
    scope = service.scope_of(
        principal.key_hash if principal else None,
        client_address(request, ctx.settings.trusted_proxies),
    )
    body = await request.body()  # cached on the request: the endpoint reads it again
    fingerprint = service.fingerprint(request.method, request.url.path, request.url.query, body)
    async with ctx.transaction() as session:
        outcome = await service.claim(
            session, scope=scope, key=key, fingerprint=fingerprint, now=ctx.clock.now()
        )
    if isinstance(outcome, StoredResponse):
        return _replay(outcome)
    try:
        response = await run(request)
    except BaseException:
        await _abandon(ctx, outcome)
        raise
    if 200 <= response.status_code < 300 and hasattr(response, "body"):
        await _store(ctx, outcome, response)
    else:
        await _abandon(ctx, outcome)
    return response


def _replay(stored: StoredResponse) -> Response:
    headers = dict(stored.headers)
    headers[REPLAYED_HEADER] = "true"
    return Response(content=stored.body, status_code=stored.status, headers=headers)


def _storable_headers(response: Response) -> list[tuple[str, str]]:
    kept = []
    for raw_name, raw_value in response.raw_headers:
        name = raw_name.decode("latin-1").lower()
        if name in _NOT_STORED or name.startswith(_NOT_STORED_PREFIXES):
            continue
        kept.append((name, raw_value.decode("latin-1")))
    return kept


async def _store(ctx: AppContext, held: Claim, response: Response) -> None:
    stored = StoredResponse(response.status_code, _storable_headers(response), bytes(response.body))
    try:
        async with ctx.transaction() as session:
            kept = await service.complete(session, held, stored, ctx.clock.now())
    except Exception:
        # The work is done and committed: answer it. The claim lapses with its lock.
        log.exception("could not store an idempotent response")
        return
    if not kept:
        log.warning("idempotency claim %s was taken over before completion", held.row_id)


async def _abandon(ctx: AppContext, held: Claim) -> None:
    try:
        async with ctx.transaction() as session:
            await service.abandon(session, held)
    except Exception:
        log.exception("could not release an idempotency claim; it lapses with its lock")


__all__ = ["REPLAYED_HEADER", "IdempotentRoute", "idempotent_post"]
