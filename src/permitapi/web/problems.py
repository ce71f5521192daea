"""Exception handlers: every error becomes an RFC 9457 problem with a stable code.

FastAPI's 422 validation body never reaches a client: invalid parameters and bodies are 400
problems naming the parameter (`parameter`, and each issue in `errors`).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any

import orjson
from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.responses import Response

from permitapi.errors import (
    PROBLEM_CONTENT_TYPE,
    ApiError,
    BadRequest,
    MethodNotAllowed,
    NotFound,
    PayloadTooLarge,
    UnsupportedMediaType,
    problem_body,
)
from permitapi.telemetry.metrics import REFUSALS


def request_id_of(request: Request) -> str:
    return str(getattr(request.state, "request_id", ""))


def problem_response(request: Request, error: ApiError) -> Response:
    if error.status == 429:
        REFUSALS.labels(error.code).inc()
    body = problem_body(
        status=error.status,
        code=error.code,
        title=error.title,
        detail=error.detail,
        instance=request.url.path,
        request_id=request_id_of(request),
        extra=error.extra,
    )
    return Response(
        content=orjson.dumps(body),
        status_code=error.status,
        media_type=PROBLEM_CONTENT_TYPE,
        headers=error.headers,
    )


def _parameter_name(location: Sequence[Any]) -> tuple[str, str]:
    """('query', 'limit') -> ('query', 'limit'); ('body', 'events', 0) -> ('body', 'events[0]')."""
    where = str(location[0]) if location else "request"
    path = ""
    for part in location[1:]:
        path += f"[{part}]" if isinstance(part, int) else (f".{part}" if path else str(part))
    return where, path


def _message(error: Mapping[str, Any]) -> str:
    kind = error.get("type", "")
    if kind == "missing":
        return "is required"
    if kind == "json_invalid":
        return "the request body is not valid JSON"
    if kind == "extra_forbidden":
        return "is not a recognised field"
    return str(error.get("msg", "is invalid"))


def validation_problem(request: Request, exc: RequestValidationError) -> Response:
    issues = []
    for error in exc.errors():
        where, name = _parameter_name(error.get("loc", ()))
        issues.append({"parameter": name or where, "location": where, "message": _message(error)})
    first = issues[0] if issues else {"parameter": "request", "location": "request", "message": ""}
    in_body = first["location"] == "body"
    code = "invalid_body" if in_body else "invalid_parameter"
    if in_body and first["parameter"] == "body":
        detail = f"Invalid request body: {first['message']}"
    elif in_body:
        detail = f"Invalid request body field '{first['parameter']}': {first['message']}"
    else:
        detail = f"Invalid value for '{first['parameter']}': {first['message']}"
    error = BadRequest(detail, code=code, extra={"parameter": first["parameter"], "errors": issues})
    return problem_response(request, error)


def http_exception_problem(request: Request, exc: StarletteHTTPException) -> Response:
    error: ApiError
    if exc.status_code == 404:
        error = NotFound(f"No resource at {request.url.path}.", code="not_found")
    elif exc.status_code == 405:
        error = MethodNotAllowed(
            f"{request.method} is not allowed on {request.url.path}.",
            headers=dict(exc.headers or {}),
        )
    elif exc.status_code == 413:
        error = PayloadTooLarge("The request body is too large.")
    elif exc.status_code == 415:
        error = UnsupportedMediaType("The request body must be application/json.")
    else:
        error = ApiError(str(exc.detail), code=f"http_{exc.status_code}", status=exc.status_code)
    return problem_response(request, error)


def install_problem_handlers(
    app: FastAPI, *, refusal_headers: Callable[[Request], Awaitable[None]]
) -> None:
    """`refusal_headers` runs before a validation problem is sent: the headers an authenticated
    refusal carries (app.py hands over usage/auth_dependencies.py's refusal headers)."""

    async def on_api_error(request: Request, exc: Exception) -> Response:
        assert isinstance(exc, ApiError)
        return problem_response(request, exc)

    async def on_validation(request: Request, exc: Exception) -> Response:
        assert isinstance(exc, RequestValidationError)
        await refusal_headers(request)
        return validation_problem(request, exc)

    async def on_http(request: Request, exc: Exception) -> Response:
        assert isinstance(exc, StarletteHTTPException)
        return http_exception_problem(request, exc)

    app.add_exception_handler(ApiError, on_api_error)
    app.add_exception_handler(RequestValidationError, on_validation)
    app.add_exception_handler(StarletteHTTPException, on_http)
