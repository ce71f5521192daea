"""Per-request context set by the outermost middleware: request id and response headers.

The middleware is pure ASGI so it sees every response, including problems rendered for
exceptions nothing else caught: those become a 500 problem here, with the request id, instead
of a bare text body.
"""

from __future__ import annotations

import logging
import re
import uuid
from typing import Any

import orjson
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from permitapi.errors import PROBLEM_CONTENT_TYPE, InternalError, problem_body

REQUEST_ID_HEADER = "x-request-id"
_VALID_REQUEST_ID = re.compile(r"^[A-Za-z0-9._-]{8,128}$")
log = logging.getLogger("permitapi.http")


def accept_request_id(value: str | None) -> str:
    """The client's request id when valid, otherwise a fresh one."""
    if value and _VALID_REQUEST_ID.fullmatch(value):
        return value
    return f"req_{uuid.uuid4().hex}"


def extra_response_headers(state: dict[str, Any]) -> list[tuple[bytes, bytes]]:
    """Headers that request handling left in scope state for the response."""
    headers: dict[str, str] = dict(state.get("response_headers", {}))
    return [(k.lower().encode(), v.encode()) for k, v in headers.items()]


class RequestContextMiddleware:
    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        raw = None
        for name, value in scope["headers"]:
            if name == b"x-request-id":
                raw = value.decode("latin-1")
                break
        request_id = accept_request_id(raw)
        state = scope.setdefault("state", {})
        state["request_id"] = request_id
        started = False

        async def send_with_headers(message: Message) -> None:
            nonlocal started
            if message["type"] == "http.response.start":
                started = True
                headers = [
                    (k, v) for k, v in message.get("headers", []) if k.lower() != b"x-request-id"
                ]
                headers.append((b"x-request-id", request_id.encode()))
                existing = {k.lower() for k, _ in headers}
                headers.extend(
                    (k, v) for k, v in extra_response_headers(state) if k not in existing
                )
                message["headers"] = headers
            await send(message)

        try:
            await self.app(scope, receive, send_with_headers)
        except Exception:
            log.exception("unhandled error on %s %s", scope.get("method"), scope.get("path"))
            if started:
                raise
            body = problem_body(
                status=500,
                code=InternalError.default_code,
                title=InternalError.title,
                detail="An unexpected error occurred. It has been logged; retry later.",
                instance=scope.get("path", ""),
                request_id=request_id,
            )
            await send_with_headers(
                {
                    "type": "http.response.start",
                    "status": 500,
                    "headers": [(b"content-type", PROBLEM_CONTENT_TYPE.encode())],
                }
            )
            await send({"type": "http.response.body", "body": orjson.dumps(body)})
