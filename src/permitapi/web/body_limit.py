"""The request body limit (PERMITAPI_MAX_REQUEST_BODY_BYTES, 1 MiB by default), enforced while
the body streams in and before anything reads it: authentication, JSON parsing, the tool server.

- A declared `Content-Length` over the limit is refused at once, without reading a byte.
- A chunked body is counted as it arrives; the chunk that crosses the limit ends the request:
  whatever the application answers then is replaced by the 413, and nothing past the limit is
  buffered. (A body with a declared length is never longer: the server frames it.)

Either way the answer is the 413 problem `payload_too_large` (with `max_body_bytes`). The
server discards the rest of a refused body as it arrives, unbuffered, and then answers: closing
the connection instead would make the client's kernel drop the 413 it had not read yet (a reset
on a socket with unread data), so a client still sending would see a broken connection, not the
problem. Pure ASGI, just inside the request context middleware (the problem carries the request
id), outside everything that reads a body.
"""

from __future__ import annotations

from typing import Final

from starlette.exceptions import HTTPException
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from permitapi.errors import PayloadTooLarge
from permitapi.web.asgi_problem import problem_messages

DEFAULT_MAX_BYTES: Final = 1024 * 1024


class BodyTooLarge(HTTPException):
    """Raised from `receive` when the limit is crossed: an HTTPException, so the layers in
    between (FastAPI's body parsing) pass it on rather than turning it into a 400."""

    def __init__(self) -> None:
        super().__init__(status_code=413)


def framing(scope: Scope) -> tuple[int | None, bool]:
    """The declared Content-Length (None when absent) and whether the body is chunked."""
    declared: int | None = None
    chunked = False
    for name, value in scope["headers"]:
        if name == b"content-length":
            try:
                declared = int(value)
            except ValueError:
                declared = None  # the server refuses a malformed length before we run
        elif name == b"transfer-encoding":
            chunked = True
    return declared, chunked


class BodyLimitMiddleware:
    def __init__(self, app: ASGIApp, max_bytes: int = DEFAULT_MAX_BYTES) -> None:
        self.app = app
        self.max_bytes = max_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        declared, chunked = framing(scope)
        if declared is not None and declared > self.max_bytes:
            await self.refuse(scope, send)
            return
        if not chunked:
            # HTTP/1.1 framing: the server hands on at most the declared length, and a request
            # with neither header has no body. Only chunked bodies need counting, so the hot
            # path's bodiless GETs pass untouched.
            await self.app(scope, receive, send)
            return
        received = 0
        exceeded = False
        app_started = False
        refused = False

        async def limited_receive() -> Message:
            nonlocal received, exceeded
            if exceeded:
                raise BodyTooLarge
            message = await receive()
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                if received > self.max_bytes:
                    exceeded = True
                    raise BodyTooLarge
            return message

        async def guarded_send(message: Message) -> None:
            nonlocal app_started, refused
            if exceeded and not app_started:
                # The application answered after the limit was crossed (an error of its own
                # making, e.g. a parse failure): the answer is the 413.
                if not refused:
                    refused = True
                    await self.refuse(scope, send)
                return
            if message["type"] == "http.response.start":
                app_started = True
            await send(message)

        try:
            await self.app(scope, limited_receive, guarded_send)
        except Exception:
            if not exceeded or app_started:
                raise
        if exceeded and not refused and not app_started:
            await self.refuse(scope, send)

    async def refuse(self, scope: Scope, send: Send) -> None:
        error = PayloadTooLarge(
            f"The request body is larger than the limit of {self.max_bytes} bytes."
        )
        for message in problem_messages(scope, error, extra={"max_body_bytes": self.max_bytes}):
            await send(message)
