"""The official MCP SDK client (mcp 2.x) against a running server's /mcp, over real HTTP.

`mode="auto"` negotiates the current revision (2026-07-28: `server/discover`, per-request
`_meta`); `mode="legacy"` does the `initialize` handshake of the earlier revisions. The SDK
talks through httpx2 (not httpx), so headers go on an httpx2 client.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import httpx
import httpx2
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp_types import CallToolResult, ListToolsResult

MODES = ("auto", "legacy")


def auth_headers(key: str | None, *, bearer: bool = True) -> dict[str, str]:
    if key is None:
        return {}
    return {"Authorization": f"Bearer {key}"} if bearer else {"X-API-Key": key}


@asynccontextmanager
async def mcp_client(
    base_url: str,
    key: str | None = None,
    *,
    mode: str = "auto",
    bearer: bool = True,
    headers: dict[str, str] | None = None,
) -> AsyncIterator[Client]:
    sent = {**auth_headers(key, bearer=bearer), **(headers or {})}
    async with (
        httpx2.AsyncClient(headers=sent, timeout=60) as http,
        Client(streamable_http_client(f"{base_url}/mcp", http_client=http), mode=mode) as client,
    ):
        yield client


def call_tool(
    base_url: str, key: str | None, tool: str, arguments: dict[str, Any], **options: Any
) -> CallToolResult:
    """One `tools/call` on a fresh client (blocking: the tests drive REST with httpx too)."""

    async def run() -> CallToolResult:
        async with mcp_client(base_url, key, **options) as client:
            return await client.call_tool(tool, arguments)

    return asyncio.run(run())


def list_tools(base_url: str, **options: Any) -> tuple[ListToolsResult, str]:
    """`tools/list` on a fresh client, with the protocol revision it negotiated."""

    async def run() -> tuple[ListToolsResult, str]:
        async with mcp_client(base_url, **options) as client:
            listed = await client.list_tools()
            return listed, str(client.session.protocol_version)

    return asyncio.run(run())


def structured(result: CallToolResult) -> dict[str, Any]:
    """The structured content of a successful call (fails the test on an error result)."""
    assert not result.is_error, result.content
    assert isinstance(result.structured_content, dict), result
    return result.structured_content


def problem(result: CallToolResult) -> dict[str, Any]:
    """The problem carried by an error result."""
    assert result.is_error, result.structured_content
    assert isinstance(result.structured_content, dict), result
    text = result.content[0]
    assert getattr(text, "type", None) == "text"
    assert result.structured_content["code"] in getattr(text, "text", "")
    return result.structured_content


def meters(http: httpx.Client, key: str) -> dict[str, int]:
    """Units used this month on both meters (GET /usage costs nothing)."""
    body = http.get("/api/v1/usage", headers={"X-API-Key": key}).json()
    return {"lookup": int(body["lookup"]["used"]), "discovery": int(body["discovery"]["used"])}


def without_age(body: Any) -> Any:
    """A body without the one field that moves between two reads a second apart."""
    if isinstance(body, dict):
        return {k: without_age(v) for k, v in body.items() if k != "age_seconds"}
    if isinstance(body, list):
        return [without_age(item) for item in body]
    return body
