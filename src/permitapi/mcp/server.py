"""The remote tool server at {base_url}/mcp: the official `mcp` SDK (2.x) low-level `Server`
behind its streamable-HTTP session manager, stateless, with JSON responses.

- Transport: one JSON-RPC message per POST; GET, DELETE and every other method are 405 with
  `Allow: POST` (there are no sessions and no server-initiated streams). Both handshakes work:
  the legacy `initialize` (2025-03-26 to 2025-11-25 revisions; `tools/list` and `tools/call`
  also work without it, the header `MCP-Protocol-Version` or its absence picking the revision)
  and the per-request revision 2026-07-28 (`server/discover`, `_meta`, `Mcp-Method`).
- Progress: a `tools/call` with a `progressToken` from a client accepting `text/event-stream`
  is served by a second, streaming session manager, so the notifications of a waiting lookup
  reach the caller; every other message gets one JSON response.
- DNS-rebinding protection: the Host (and a browser's Origin) must be one of
  PERMITAPI_MCP_ALLOWED_HOSTS / PERMITAPI_MCP_ALLOWED_ORIGINS (421 / 403 otherwise).
- `tools/list` is the same for every caller (the thirteen tools of `tools`, in that order, with
  strict input schemas, the REST answers' compact output schemas and annotations; at most
  16 KB, a test holds it); its 2026-07-28
  cache hint is public, one hour.
- `tools/call`: the caller is authenticated as REST authenticates (`auth`), the arguments are
  validated, the tool's service call runs, and the answer or the domain failure is a tool
  result (`results`). An unknown tool name is a JSON-RPC error (-32602), as the protocol asks.
  Nothing a caller sends makes a call crash: an unexpected failure is an `internal_error`
  result (logged), a database outage `database_unavailable` with retry_after.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass
from typing import Any

import orjson
from mcp.server.caching import CacheHint
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel.server import Server
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from mcp.server.transport_security import TransportSecuritySettings
from mcp.shared.exceptions import MCPError
from mcp_types import (
    INVALID_PARAMS,
    CallToolRequestParams,
    CallToolResult,
    ListToolsResult,
    PaginatedRequestParams,
)
from mcp_types import Tool as ToolDefinition
from pydantic import ValidationError
from starlette.requests import Request
from starlette.types import Message, Receive, Scope, Send

from permitapi import __version__
from permitapi.config import Settings
from permitapi.context import AppContext
from permitapi.db.outage import is_database_outage
from permitapi.errors import ApiError, InternalError, ServiceUnavailable
from permitapi.mcp import results
from permitapi.mcp.auth import authenticate
from permitapi.mcp.tools import BY_NAME, TOOLS, Tool, ToolCall, check_values
from permitapi.telemetry.metrics import MCP_TOOL_CALLS
from permitapi.usage.auth_dependencies import get_ctx_now, record_meter

log = logging.getLogger("permitapi.mcp")

SERVER_NAME = "permitapi"
UNKNOWN_TOOL = "unknown"
PEEK_LIMIT = 1 << 20


@dataclass(frozen=True)
class _Mount:
    path: str


MOUNT = _Mount("/mcp")
TOOLS_LIST_TTL_MS = 3_600_000
INSTRUCTIONS = (
    "Building-permit status from city and county permit portals (Los Angeles City and County, "
    "and cities and counties on Accela Citizen Access). Start with get_permit_status for a "
    "permit number; list_jurisdictions gives the slugs; search_permits finds permits without "
    "a number (Los Angeles only). The detail tools (inspections, conditions, history, "
    "canonical resource) read what a status lookup stored. Failures are tool results with "
    "isError and a stable `code`; ambiguous numbers carry ranked `candidates`, limits a "
    "`retry_after` in seconds. Authenticate with 'Authorization: Bearer <API key>' or "
    "'X-API-Key'; without a key the read tools answer from a demo dataset."
)


def _definition(tool: Tool) -> ToolDefinition:
    return ToolDefinition(
        name=tool.name,
        title=tool.title,
        description=tool.description,
        input_schema=tool.input_schema(),
        output_schema=tool.output_schema(),
        annotations=tool.annotations.model_copy(update={"title": tool.title}),
    )


class ToolServer:
    """The ASGI app mounted at /mcp. `running()` must be entered by the host app's lifespan
    (a mounted app's own lifespan never runs)."""

    def __init__(self, settings: Settings) -> None:
        self.definitions = [_definition(tool) for tool in TOOLS]
        self._schemas = {d.name: d.input_schema for d in self.definitions}
        self.server: Server[Any] = Server(
            SERVER_NAME,
            version=__version__,
            title="Permit status, discovery and monitoring",
            instructions=INSTRUCTIONS,
            cache_hints={"tools/list": CacheHint(ttl_ms=TOOLS_LIST_TTL_MS, scope="public")},
            get_tool_input_schema=self._schemas.get,
            on_list_tools=self._list_tools,
            on_call_tool=self._call_tool,
        )
        security = TransportSecuritySettings(
            enable_dns_rebinding_protection=True,
            allowed_hosts=list(settings.mcp_allowed_hosts),
            allowed_origins=list(settings.mcp_allowed_origins),
        )
        self.manager = StreamableHTTPSessionManager(
            app=self.server, json_response=True, stateless=True, security_settings=security
        )
        # A tools/call that asks for progress (a progressToken) from a client that accepts an
        # event stream is answered on one, so its progress notifications have a channel; every
        # other message keeps the single JSON response.
        self.streaming = StreamableHTTPSessionManager(
            app=self.server, json_response=False, stateless=True, security_settings=security
        )

    @contextlib.asynccontextmanager
    async def running(self) -> AsyncIterator[None]:
        """The session manager's task group, held by a task of its own: anyio requires a task
        group to be left by the task that entered it, and a host may run its lifespan's start
        and end in different tasks (the test fixtures do)."""
        started, stopping = asyncio.Event(), asyncio.Event()

        async def hold() -> None:
            async with self.manager.run(), self.streaming.run():
                started.set()
                await stopping.wait()

        holder = asyncio.create_task(hold(), name="mcp-session-manager")
        waiting = asyncio.create_task(started.wait())
        await asyncio.wait({holder, waiting}, return_when=asyncio.FIRST_COMPLETED)
        if not started.is_set():
            waiting.cancel()
            await holder  # raises what stopped it
            raise RuntimeError("the MCP session manager stopped before it started")
        try:
            yield
        finally:
            stopping.set()
            await holder

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        # The request metrics label a request by its route's path; a plain ASGI endpoint has
        # none in scope, so /mcp would count as "unmatched".
        scope["route"] = MOUNT
        if scope["type"] == "http" and scope["method"] != "POST":
            await _method_not_allowed(send)
            return
        # A field value excludes surrounding whitespace (RFC 9110 §5.5); the SDK compares the
        # routing headers (Mcp-Method, Mcp-Name) with the body byte for byte.
        headers = scope.get("headers", [])
        if any(value != value.strip(b" \t") for _, value in headers):
            scope = {**scope, "headers": [(k, v.strip(b" \t")) for k, v in headers]}
        if scope["type"] != "http":
            await self.manager.handle_request(scope, receive, send)
            return
        body, receive = await _buffered(receive)
        manager = self.streaming if _wants_progress(scope, body) else self.manager
        await manager.handle_request(scope, receive, send)

    # -- JSON-RPC handlers ----------------------------------------------------------------------

    async def _list_tools(
        self, rpc: ServerRequestContext[Any], params: PaginatedRequestParams | None
    ) -> ListToolsResult:
        return ListToolsResult(tools=self.definitions)

    async def _call_tool(
        self, rpc: ServerRequestContext[Any], params: CallToolRequestParams
    ) -> CallToolResult:
        tool = BY_NAME.get(params.name)
        if tool is None:
            MCP_TOOL_CALLS.labels(UNKNOWN_TOOL, "unknown_tool").inc()
            raise MCPError(
                INVALID_PARAMS,
                f"Unknown tool: {params.name!r}. tools/list names the {len(TOOLS)} tools.",
            )
        request = rpc.request
        if not isinstance(request, Request):
            raise MCPError(INVALID_PARAMS, "The tool server answers over HTTP only.")
        arguments = params.arguments or {}
        result = await call_tool(
            tool, get_ctx_now(request), request, arguments, progress=rpc.session.report_progress
        )
        outcome = "ok"
        if result.is_error and isinstance(result.structured_content, dict):
            outcome = str(result.structured_content.get("code", "error"))
        MCP_TOOL_CALLS.labels(tool.name, outcome).inc()
        return result


async def call_tool(
    tool: Tool, ctx: AppContext, request: Request, arguments: Mapping[str, Any], **options: Any
) -> CallToolResult:
    """Validate the arguments (their structure, then the permit number and slug), authenticate
    (the key and its burst window), run the service call, and shape its answer or failure.
    Arguments come first so that a malformed call costs nothing (no demo call, no burst slot)
    and gets the same answer from every caller, whatever the key's entitlements."""
    keyless = False
    try:
        try:
            args = tool.input_model.model_validate(dict(arguments))
        except ValidationError as invalid:
            raise results.invalid_arguments(invalid) from None
        check_values(ctx.directory, args)
        caller = await authenticate(request, ctx, tool.access, tool.meter)
        keyless = caller.keyless
        call = ToolCall(ctx, request, caller, **options)
        try:
            body = await tool.handler(call, args)
        finally:
            if call.meter.state is not None:
                record_meter(request, call.meter.state)
        return results.success(body, tool.render)
    except ApiError as error:
        return results.failure(error, request, tool.name, keyless=keyless, arguments=arguments)
    except Exception as unexpected:
        if is_database_outage(unexpected):
            log.warning("database unavailable in tool %s: %s", tool.name, type(unexpected).__name__)
            outage = ServiceUnavailable(
                "The service's database is not reachable right now; retry after the given delay.",
                code="database_unavailable",
                headers={"Retry-After": "5"},
            )
            return results.failure(outage, request, tool.name, keyless=keyless)
        log.exception("unexpected failure in tool %s", tool.name)
        internal = InternalError("An unexpected error occurred. It has been logged; retry later.")
        return results.failure(internal, request, tool.name, keyless=keyless)


async def _buffered(receive: Receive) -> tuple[bytes, Receive]:
    """The request body (up to PEEK_LIMIT bytes: a larger one is no tools/call worth routing,
    and the SDK refuses it) and a `receive` that hands what was read over again."""
    chunks: list[bytes] = []
    size = 0
    more = True
    while more and size <= PEEK_LIMIT:
        message = await receive()
        if message["type"] != "http.request":
            break
        chunk = message.get("body", b"")
        chunks.append(chunk)
        size += len(chunk)
        more = bool(message.get("more_body", False))
    body = b"".join(chunks)
    replayed = False

    async def replay() -> Message:
        nonlocal replayed
        if not replayed:
            replayed = True
            return {"type": "http.request", "body": body, "more_body": more}
        return await receive()

    return (b"" if more else body), replay


def _wants_progress(scope: Scope, body: bytes) -> bool:
    accept = b",".join(v for k, v in scope.get("headers", []) if k.lower() == b"accept")
    if b"text/event-stream" not in accept:
        return False
    try:
        message = orjson.loads(body)
    except orjson.JSONDecodeError:
        return False
    if not isinstance(message, dict) or message.get("method") != "tools/call":
        return False
    params = message.get("params")
    meta = params.get("_meta") if isinstance(params, dict) else None
    return isinstance(meta, dict) and meta.get("progressToken") is not None


async def _method_not_allowed(send: Send) -> None:
    body = orjson.dumps(
        {
            "jsonrpc": "2.0",
            "id": None,
            "error": {
                "code": -32600,
                "message": "Method Not Allowed: the tool server takes JSON-RPC messages by POST "
                "only (stateless; no sessions, no server-sent streams).",
            },
        }
    )
    await send(
        {
            "type": "http.response.start",
            "status": 405,
            "headers": [
                (b"content-type", b"application/json"),
                (b"allow", b"POST"),
                (b"content-length", str(len(body)).encode()),
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})
