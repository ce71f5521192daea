"""Tool results: an answer becomes `structuredContent` plus its text rendering; a domain failure
becomes an `isError: true` result, never a JSON-RPC or HTTP error.

A failure's `structuredContent` is the REST twin's problem body (type, title, status, detail,
instance, code, error, request_id and the error's own members such as `candidates`,
`permit_number`, `status_url`, `plan_limit`, `upgrade_hint`, `retry_after_seconds`), plus:

- `tool`: the tool called;
- `retry_after`: seconds to wait before retrying, whenever the REST answer carries a
  Retry-After (burst and demo limits, force_refresh's hourly cap, a portal down, an
  unverifiable discovery result); absent otherwise;
- `retryable`: true when the same call may succeed later unchanged (5xx, or a retry_after);
- `next_step`, the detail naming tools instead of REST paths, and at most five candidates with
  `candidates_total` (`hints`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from mcp_types import CallToolResult, TextContent
from pydantic import ValidationError
from starlette.requests import Request

from permitapi.errors import ApiError, BadRequest, problem_body
from permitapi.mcp import hints, render
from permitapi.telemetry.metrics import REFUSALS

ARGUMENTS = "arguments"
KEYLESS_REFUSAL = (
    " Without an API key, tools answer as a sandbox key does (the demo dataset); send a live "
    "key as 'Authorization: Bearer <key>' or 'X-API-Key'."
)


def success(body: dict[str, Any], renderer: render.Renderer) -> CallToolResult:
    return CallToolResult(content=[TextContent(text=renderer(body))], structured_content=body)


# What a value of these arguments looks like, instead of pydantic's raw pattern.
_SHAPES = {
    "permit_id": "must be a canonical permit id: a UUID such as "
    "0b5c5d36-7a52-4c1f-a9c6-2d3f8d1f6a10 (resolve_permit or a status record's permit_id)",
    "operation_id": "must be the operation_id (a UUID) get_permit_status answered",
}


def _message(name: str, item: Any) -> str:
    if item["type"] == "extra_forbidden":
        return "is not an argument of this tool"
    if item["type"] in ("string_pattern_mismatch", "string_too_long") and name in _SHAPES:
        return _SHAPES[name]
    return str(item["msg"])


def invalid_arguments(error: ValidationError) -> BadRequest:
    """400 `invalid_arguments`: unknown arguments, missing ones or wrong JSON types, named like
    REST's parameter problems (`parameter` and every issue in `errors`)."""
    issues = []
    for item in error.errors(include_url=False):
        name = ".".join(str(part) for part in item["loc"]) or ARGUMENTS
        issues.append({"parameter": name, "location": ARGUMENTS, "message": _message(name, item)})
    return BadRequest(
        "Invalid arguments: " + "; ".join(f"{i['parameter']} {i['message']}" for i in issues),
        code="invalid_arguments",
        extra={"parameter": issues[0]["parameter"], "errors": issues},
    )


def _retry_after(error: ApiError) -> int | None:
    header = error.headers.get("Retry-After")
    if header is not None and header.isdigit():
        return int(header)
    seconds = error.extra.get("retry_after_seconds")
    return seconds if isinstance(seconds, int) else None


def failure(
    error: ApiError,
    request: Request,
    tool: str,
    *,
    keyless: bool,
    arguments: Mapping[str, Any] | None = None,
) -> CallToolResult:
    if error.status == 429:
        REFUSALS.labels(error.code).inc()
    extra = dict(error.extra)
    if isinstance(extra.get("errors"), list):
        # The same issues REST names, located where a tool caller put them.
        extra["errors"] = [
            {**issue, "location": ARGUMENTS} if isinstance(issue, dict) else issue
            for issue in extra["errors"]
        ]
    detail = error.detail
    if keyless and error.code == "sandbox_not_supported":
        detail += KEYLESS_REFUSAL
    state: dict[str, Any] = request.scope.get("state", {})
    body = problem_body(
        status=error.status,
        code=error.code,
        title=error.title,
        detail=detail,
        instance=request.url.path,
        request_id=str(state.get("request_id", "")),
        extra=extra,
    )
    body = hints.for_tool(tool, error.code, body, arguments or {})
    body["tool"] = tool
    retry_after = _retry_after(error)
    if retry_after is not None:
        body["retry_after"] = retry_after
    body["retryable"] = error.status >= 500 or retry_after is not None
    return CallToolResult(
        content=[TextContent(text=render.problem(body))], structured_content=body, is_error=True
    )
