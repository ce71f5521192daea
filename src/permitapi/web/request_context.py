"""Per-request context set by the outermost middleware: request id and response headers.

The middleware is pure ASGI so it sees every response, including problems rendered for
exceptions nothing else caught: those become a 500 problem here, with the request id, instead
of a bare text body. It also records each request's metrics (route template, method, status,
latency) and puts the request id in the logging context, so every log line of the request
carries it. With the access log on (PERMITAPI_ACCESS_LOG), it logs one line per request:
request id, method, route template, status, latency and the key's id (never the key).
"""

from __future__ import annotations

import itertools
import logging
import os
import re
import secrets
import time
from dataclasses import dataclass
from typing import Any

from starlette.requests import Request
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from permitapi.db.outage import is_database_outage
from permitapi.errors import InternalError
from permitapi.telemetry import logs
from permitapi.telemetry.metrics import HTTP_LATENCY, HTTP_REQUESTS
from permitapi.web.asgi_problem import problem_messages

REQUEST_ID_HEADER = "x-request-id"


@dataclass(frozen=True)
class Failure:
    status: int
    code: str
    title: str
    detail: str
    retry_after: int | None = None


UNEXPECTED = Failure(
    500,
    InternalError.default_code,
    InternalError.title,
    "An unexpected error occurred. It has been logged; retry later.",
)
# A restarting or failing-over PostgreSQL is usually back within seconds.
DATABASE_UNAVAILABLE = Failure(
    503,
    "database_unavailable",
    "Service unavailable",
    "The service's database is not reachable right now; retry after the given delay.",
    retry_after=5,
)
_VALID_REQUEST_ID = re.compile(r"^[A-Za-z0-9._-]{8,128}$")
log = logging.getLogger("permitapi.http")
access = logging.getLogger(logs.ACCESS_LOGGER)


class _RequestIds:
    """Fresh request ids: a random per-process prefix and a counter, unique across processes
    and restarts without a system call per request (uuid4 reads os.urandom each time: about 4 %
    of a bare request's CPU under load). A forked child draws a prefix of its own."""

    def __init__(self) -> None:
        self.reseed()
        os.register_at_fork(after_in_child=self.reseed)

    def reseed(self) -> None:
        self._prefix = secrets.token_hex(8)
        self._counter = itertools.count(1)

    def new(self) -> str:
        return f"req_{self._prefix}{next(self._counter):016x}"


_request_ids = _RequestIds()


def accept_request_id(value: str | None) -> str:
    """The client's request id when valid, otherwise a fresh one."""
    if value and _VALID_REQUEST_ID.fullmatch(value):
        return value
    return _request_ids.new()


def set_response_header(request: Request, name: str, value: str) -> None:
    """Leave a header in scope state for the response (`extra_response_headers` adds it)."""
    state: dict[str, Any] = request.scope.setdefault("state", {})
    state.setdefault("response_headers", {})[name] = value


def extra_response_headers(state: dict[str, Any]) -> list[tuple[bytes, bytes]]:
    """Headers that request handling left in scope state for the response."""
    headers: dict[str, str] = dict(state.get("response_headers", {}))
    return [(k.lower().encode(), v.encode()) for k, v in headers.items()]


def route_template(scope: Scope, api_prefix: str) -> str:
    """The matched route's full path template (bounded label values), or `unmatched`.

    FastAPI leaves the route of an included router in scope with its path relative to that
    router, so the API prefix is put back; a mounted app's routes are relative to the mount
    (`root_path`).
    """
    route = scope.get("route")
    path = getattr(route, "path", None)
    if not isinstance(path, str) or not path:
        return "unmatched"
    path = str(scope.get("root_path", "")) + path
    if str(scope.get("path", "")).startswith(api_prefix + "/") and not path.startswith(api_prefix):
        path = api_prefix + path
    return path


class RequestMetrics:
    """Per-(route, method, status) metric children, resolved once: `labels()` takes a lock and
    builds a key on every call, which the hot path does not need to pay."""

    def __init__(self) -> None:
        self._children: dict[tuple[str, str, int], tuple[Any, Any]] = {}

    def record(self, route: str, method: str, status: int, seconds: float) -> None:
        key = (route, method, status)
        children = self._children.get(key)
        if children is None:
            children = (
                HTTP_REQUESTS.labels(route, method, str(status)),
                HTTP_LATENCY.labels(route, method),
            )
            self._children[key] = children
        children[0].inc()
        children[1].observe(seconds)


class RequestContextMiddleware:
    def __init__(self, app: ASGIApp, api_prefix: str = "/api/v1", access_log: bool = False) -> None:
        self.app = app
        self.api_prefix = api_prefix
        self.access_log = access_log
        self.metrics = RequestMetrics()

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
        token = logs.REQUEST_ID.set(request_id)
        began = time.perf_counter()
        started = False
        status = 500

        async def send_with_headers(message: Message) -> None:
            nonlocal started, status
            if message["type"] == "http.response.start":
                started = True
                status = message["status"]
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
        except Exception as error:
            outage = is_database_outage(error)
            if outage:
                log.warning(
                    "database unavailable on %s %s: %s",
                    scope.get("method"),
                    scope.get("path"),
                    type(error).__name__,
                )
            else:
                log.exception("unhandled error on %s %s", scope.get("method"), scope.get("path"))
            if started:
                raise
            failure = DATABASE_UNAVAILABLE if outage else UNEXPECTED
            status = failure.status
            headers: list[tuple[bytes, bytes]] = []
            if failure.retry_after is not None:
                headers.append((b"retry-after", str(failure.retry_after).encode()))
            start, body = problem_messages(scope, failure, headers=headers)
            await send_with_headers(start)
            await send(body)
        finally:
            route = route_template(scope, self.api_prefix)
            method = scope.get("method", "")
            seconds = time.perf_counter() - began
            self.metrics.record(route, method, status, seconds)
            if self.access_log:
                log_access(state, route, method, status, seconds)
            logs.REQUEST_ID.reset(token)


def log_access(state: dict[str, Any], route: str, method: str, status: int, seconds: float) -> None:
    # The principal is what authentication left in request.state: its key id, never the key.
    principal = state.get("principal")
    access.info(
        "%s %s %d",
        method,
        route,
        status,
        extra={
            "method": method,
            "route": route,
            "status": status,
            "latency_ms": round(seconds * 1000, 2),
            "key_id": getattr(principal, "api_key_id", None),
        },
    )
