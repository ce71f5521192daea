"""The tool server inside the app as the in-process test fixtures run it (its lifespan started
and ended in different tasks), on SQLite and PostgreSQL: tools/list and a call over ASGI."""

from __future__ import annotations

import httpx
from fastapi import FastAPI

from tests.mcp.test_catalogue import TOOL_NAMES

HEADERS = {"Accept": "application/json, text/event-stream", "MCP-Protocol-Version": "2025-11-25"}


async def test_tools_list_and_a_call_in_process(app: FastAPI) -> None:
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1:8000") as client:
        listed = await client.post(
            "/mcp", json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"}, headers=HEADERS
        )
        assert listed.status_code == 200, listed.text
        assert [t["name"] for t in listed.json()["result"]["tools"]] == TOOL_NAMES
        called = await client.post(
            "/mcp",
            json={
                "jsonrpc": "2.0",
                "id": 2,
                "method": "tools/call",
                "params": {"name": "list_jurisdictions", "arguments": {}},
            },
            headers=HEADERS,
        )
        result = called.json()["result"]
        assert result["isError"] is False
        assert result["structuredContent"]["total"] == len(
            result["structuredContent"]["jurisdictions"]
        )
        refused = await client.post(
            "/mcp",
            json={
                "jsonrpc": "2.0",
                "id": 3,
                "method": "tools/call",
                "params": {"name": "list_watches", "arguments": {}},
            },
            headers={**HEADERS, "X-API-Key": "sk_live_" + "0" * 32},
        )
        assert refused.json()["result"]["structuredContent"]["code"] == "invalid_api_key"
