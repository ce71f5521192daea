"""Routes whose requests skip FastAPI's dependency and parameter solver.

FastAPI builds each endpoint call by walking the signature's dependency tree and validating
every parameter through pydantic. On the cached status lookup that machinery cost about as much
as the lookup itself: on the cached-lookup bench the route's signature with a constant answer
served ~2,750 requests/s against ~4,900 for a handler reading the request directly
(docs/decisions.md, "Hot path"). A `direct_route` keeps the endpoint's declared signature,
which still describes the operation in OpenAPI, but runs `handler(request)` instead; the handler
parses what it needs and calls the same endpoint function. This is FastAPI's documented
extension point (a custom APIRoute overriding `get_route_handler`).

Parameter errors must look exactly like FastAPI's own: handlers parse with helpers such as
`query_bool`, which raise RequestValidationError, so the usual problem rendering applies.
FastAPI's dependency_overrides do not reach a direct route's handler.
"""

from __future__ import annotations

from collections.abc import Callable, Coroutine, Mapping
from typing import Any

from fastapi import Request
from fastapi.exceptions import RequestValidationError
from fastapi.routing import APIRoute
from pydantic import TypeAdapter, ValidationError
from starlette.responses import Response

Handler = Callable[[Request], Coroutine[Any, Any, Response]]

_BOOL: TypeAdapter[bool] = TypeAdapter(bool)


def direct_route(handler: Handler) -> type[APIRoute]:
    """An APIRoute class answering every request with `handler`."""

    class DirectRoute(APIRoute):
        def get_route_handler(self) -> Handler:
            return handler

    return DirectRoute


def query_bool(query: Mapping[str, str], name: str, default: bool) -> bool:
    """A boolean query parameter with FastAPI's semantics: absent is the default; the last of
    repeated values counts; what pydantic's lax bool accepts (true/false, 1/0, yes/no, on/off,
    any case) is parsed; anything else, the empty string included, is a RequestValidationError
    naming the parameter."""
    raw = query.get(name)
    if raw is None:
        return default
    try:
        return _BOOL.validate_python(raw)
    except ValidationError as exc:
        raise RequestValidationError(_located(exc, ("query", name))) from None


def _located(exc: ValidationError, loc: tuple[str, ...]) -> list[dict[str, Any]]:
    return [{**error, "loc": loc + tuple(error["loc"])} for error in exc.errors()]
