"""Generic fault rendering that every simulated family reuses.

A family handler starts with `fault = store.on_request(slug)` and then:

    response = await render_generic_fault(fault)
    if response is not None:
        return response              # down / timeout / error rendered generically
    if fault and fault.mode == "maintenance": ...   # the family's own maintenance page
    if fault and fault.mode == "blocked": ...       # the family's own wall (login, CAPTCHA...)

Generic modes:
- `down`: 502 Bad Gateway with a proxy-style body (the portal behind its gateway is gone).
- `timeout`: waits `latency_ms` (default `DEFAULT_TIMEOUT_MS`), then answers 504, so even a
  client more patient than the delay gets no data.
- `slow`: waits `latency_ms`, then returns None: the family answers normally.
- `error`: 500 with a generic server error page.
- `reset`: starts a 200 response, then drops the connection before the body is complete (what
  a client sees when a load balancer or the portal resets a connection mid-response).
- `garbage`: 200 with bytes that are no page, no JSON and no ArcGIS answer (a misconfigured
  proxy, a truncated cache, a binary blob served as text/html).
"""

from __future__ import annotations

import asyncio

from starlette.responses import HTMLResponse, Response
from starlette.types import Receive, Scope, Send

from permitapi.portalsim.store import Fault

DEFAULT_TIMEOUT_MS = 60_000
GARBAGE = b"\x1f\x8b\x08\x00\xff\xfe<h\x00tml \x93\xc4PK\x03\x04\r\n\x00" * 64


class ConnectionDrop(Exception):
    """Raised after the response has started, so the server aborts the connection."""


class DroppedResponse(Response):
    """Promises a body it never finishes sending."""

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        await send(
            {
                "type": "http.response.start",
                "status": 200,
                "headers": [(b"content-type", b"text/html"), (b"content-length", b"100000")],
            }
        )
        await send({"type": "http.response.body", "body": b"<html><body>", "more_body": True})
        raise ConnectionDrop("simulated connection reset")


async def render_generic_fault(fault: Fault | None) -> Response | None:
    """The response for down/timeout/error/reset/garbage; None for no fault, slow (after its delay),
    maintenance and blocked (which the family renders in its own format)."""
    if fault is None:
        return None
    if fault.mode == "down":
        return HTMLResponse(
            "<html><head><title>502 Bad Gateway</title></head>"
            "<body><h1>502 Bad Gateway</h1></body></html>",
            status_code=502,
        )
    if fault.mode == "timeout":
        await asyncio.sleep((fault.latency_ms or DEFAULT_TIMEOUT_MS) / 1000)
        return HTMLResponse("<html><body><h1>504 Gateway Time-out</h1></body></html>", 504)
    if fault.mode == "slow":
        await asyncio.sleep(fault.latency_ms / 1000)
        return None
    if fault.mode == "reset":
        return DroppedResponse()
    if fault.mode == "garbage":
        return Response(GARBAGE, status_code=200, media_type="text/html")
    if fault.mode == "error":
        return HTMLResponse(
            "<html><head><title>Runtime Error</title></head><body><h1>Server Error</h1>"
            "<p>An unexpected error occurred.</p></body></html>",
            status_code=500,
        )
    return None


def generic_maintenance_page() -> HTMLResponse:
    """A fallback maintenance page for families that have no format of their own (503)."""
    return HTMLResponse(
        "<html><head><title>Maintenance</title></head><body>"
        "<p>Service not available at this time. Please try again later.</p></body></html>",
        status_code=503,
        headers={"Retry-After": "120"},
    )
