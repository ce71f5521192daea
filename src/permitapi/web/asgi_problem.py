"""A problem answered from pure ASGI middleware (the body limit's 413, the request context's
500 and 503), where no FastAPI exception handler is left to render it."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Protocol

import orjson
from starlette.types import Message, Scope

from permitapi.errors import PROBLEM_CONTENT_TYPE, problem_body


class ProblemFacts(Protocol):
    @property
    def status(self) -> int: ...
    @property
    def code(self) -> str: ...
    @property
    def title(self) -> str: ...
    @property
    def detail(self) -> str: ...


def problem_messages(
    scope: Scope,
    problem: ProblemFacts,
    *,
    extra: Mapping[str, Any] | None = None,
    headers: Sequence[tuple[bytes, bytes]] = (),
) -> tuple[Message, Message]:
    """The response start and body messages; the request id is the one the request context
    middleware put in the scope's state."""
    state = scope.get("state", {})
    body = problem_body(
        status=problem.status,
        code=problem.code,
        title=problem.title,
        detail=problem.detail,
        instance=scope.get("path", ""),
        request_id=str(state.get("request_id", "")),
        extra=extra,
    )
    start: Message = {
        "type": "http.response.start",
        "status": problem.status,
        "headers": [(b"content-type", PROBLEM_CONTENT_TYPE.encode()), *headers],
    }
    return start, {"type": "http.response.body", "body": orjson.dumps(body)}
