"""The stateless streamable-HTTP transport, spoken raw (httpx, hand-written JSON-RPC): both
handshakes, tools/list and tools/call without a session, POST only, the Accept header a client
sends, DNS-rebinding protection for the configured deployment host, and the headers REST's
authentication sets."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from tests.mcp.conftest import DEPLOYED_HOST, client_address
from tests.mcp.test_catalogue import TOOL_NAMES

pytestmark = pytest.mark.slow

BOTH = "application/json, text/event-stream"
MODERN = "2026-07-28"
MODERN_META = {
    "io.modelcontextprotocol/protocolVersion": MODERN,
    "io.modelcontextprotocol/clientCapabilities": {},
}


def rpc(
    http: httpx.Client,
    method: str,
    params: dict[str, Any] | None = None,
    *,
    headers: dict[str, str] | None = None,
    path: str = "/mcp",
    request_id: int = 1,
) -> httpx.Response:
    message: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method}
    if params is not None:
        message["params"] = params
    return http.post(
        path,
        json=message,
        headers={"Content-Type": "application/json", "Accept": BOTH, **(headers or {})},
    )


def modern(
    http: httpx.Client, method: str, params: dict[str, Any], *, name: str | None = None, **kw: Any
) -> httpx.Response:
    headers = {"MCP-Protocol-Version": MODERN, "Mcp-Method": method, **kw.pop("headers", {})}
    if name is not None:
        headers["Mcp-Name"] = name
    return rpc(http, method, {**params, "_meta": MODERN_META}, headers=headers, **kw)


def result_of(response: httpx.Response) -> dict[str, Any]:
    assert response.status_code == 200, response.text
    assert response.headers["content-type"].startswith("application/json")
    assert "mcp-session-id" not in response.headers  # stateless: no session is ever issued
    body = response.json()
    assert "error" not in body, body
    result: dict[str, Any] = body["result"]
    return result


def test_the_2025_03_26_handshake_and_calls_without_a_session(http: httpx.Client) -> None:
    initialized = result_of(
        rpc(
            http,
            "initialize",
            {
                "protocolVersion": "2025-03-26",
                "capabilities": {},
                "clientInfo": {"name": "raw", "version": "1"},
            },
        )
    )
    assert initialized["protocolVersion"] == "2025-03-26"
    assert initialized["capabilities"]["tools"] == {"listChanged": False}
    assert initialized["serverInfo"]["name"] == "permitapi"
    assert "get_permit_status" in initialized["instructions"]
    accepted = http.post(
        "/mcp",
        json={"jsonrpc": "2.0", "method": "notifications/initialized"},
        headers={"Accept": BOTH},
    )
    assert accepted.status_code == 202

    # Each POST stands alone: no session id, with or without MCP-Protocol-Version.
    for headers in (
        {},
        {"MCP-Protocol-Version": "2025-06-18"},
        {"MCP-Protocol-Version": "2025-11-25"},
    ):
        listed = result_of(rpc(http, "tools/list", headers=headers))
        assert [t["name"] for t in listed["tools"]] == TOOL_NAMES
        called = result_of(
            rpc(
                http,
                "tools/call",
                {"name": "list_jurisdictions", "arguments": {}},
                headers=headers,
            )
        )
        assert called["isError"] is False
        assert called["structuredContent"]["total"] > 40
        assert called["content"][0]["type"] == "text"
    assert result_of(rpc(http, "ping")) == {}


def test_the_current_revision_without_initialize(http: httpx.Client) -> None:
    discovered = result_of(modern(http, "server/discover", {}))
    assert MODERN in discovered["supportedVersions"]
    assert discovered["capabilities"]["tools"] is not None
    listed = result_of(modern(http, "tools/list", {}))
    assert [t["name"] for t in listed["tools"]] == TOOL_NAMES
    assert listed["resultType"] == "complete"
    assert (listed["ttlMs"], listed["cacheScope"]) == (3_600_000, "public")
    called = result_of(
        modern(
            http,
            "tools/call",
            {"name": "list_jurisdictions", "arguments": {}},
            name="list_jurisdictions",
        )
    )
    assert called["isError"] is False
    # The routing headers are checked against the body.
    mismatch = modern(
        http, "tools/call", {"name": "list_jurisdictions", "arguments": {}}, name="list_watches"
    )
    assert mismatch.status_code == 400
    assert mismatch.json()["error"]["code"] == -32020
    gone = modern(http, "initialize", {})
    assert gone.status_code == 404
    assert gone.json()["error"]["code"] == -32601


def test_post_only_and_the_accept_header(http: httpx.Client) -> None:
    for method in ("GET", "DELETE", "PUT", "PATCH"):
        refused = http.request(method, "/mcp", headers={"Accept": BOTH})
        assert refused.status_code == 405, method
        assert refused.headers["allow"] == "POST"
        assert refused.json()["error"]["code"] == -32600
    assert http.get("/mcp/", headers={"Accept": "text/event-stream"}).status_code == 405
    # Both spellings of the endpoint answer; no redirect.
    for path in ("/mcp", "/mcp/"):
        listed = rpc(http, "tools/list", path=path)
        assert listed.status_code == 200
    for accept in (BOTH, "application/json", "application/json;q=0.9, */*;q=0.1"):
        answered = rpc(http, "tools/list", headers={"Accept": accept})
        assert answered.status_code == 200, accept
        assert answered.headers["content-type"].startswith("application/json")
    assert rpc(http, "tools/list", headers={"Accept": "text/event-stream"}).status_code == 406
    wrong_type = http.post(
        "/mcp",
        content=b'{"jsonrpc":"2.0","id":1,"method":"tools/list"}',
        headers={"Content-Type": "text/plain", "Accept": BOTH},
    )
    assert wrong_type.status_code == 400
    garbled = http.post(
        "/mcp", content=b"{nope", headers={"Content-Type": "application/json", "Accept": BOTH}
    )
    assert garbled.json()["error"]["code"] == -32700


def test_protocol_errors_stay_protocol_errors(http: httpx.Client) -> None:
    unknown = rpc(http, "tools/call", {"name": "delete_everything", "arguments": {}})
    assert unknown.json()["error"]["code"] == -32602
    assert "delete_everything" in unknown.json()["error"]["message"]
    assert rpc(http, "resources/list").json()["error"]["code"] == -32601
    assert rpc(http, "prompts/list").json()["error"]["code"] == -32601


def test_dns_rebinding_protection_allows_the_configured_host_only(http: httpx.Client) -> None:
    assert rpc(http, "tools/list", headers={"Host": "evil.example"}).status_code == 421
    assert rpc(http, "tools/list", headers={"Origin": "http://evil.example"}).status_code == 403
    assert rpc(http, "tools/list", headers={"Host": DEPLOYED_HOST}).status_code == 200
    deployed = {"Host": DEPLOYED_HOST, "Origin": f"https://{DEPLOYED_HOST}"}
    assert rpc(http, "tools/list", headers=deployed).status_code == 200
    assert (
        rpc(
            http, "tools/list", headers={"Host": DEPLOYED_HOST, "Origin": f"http://{DEPLOYED_HOST}"}
        ).status_code
        == 403
    )
    modern_refused = modern(http, "tools/list", {}, headers={"Host": "evil.example"})
    assert modern_refused.status_code == 421
    # REST is not affected by the tool server's host list.
    assert http.get("/healthz", headers={"Host": "evil.example"}).status_code == 200


def test_a_tool_call_carries_the_rest_headers(
    http: httpx.Client, accounts: dict[str, dict[str, str]]
) -> None:
    key = accounts["enterprise"]["live_key"]
    call = {"name": "get_permit_status", "arguments": {"permit_number": "BLD24-00123"}}
    keyed = rpc(http, "tools/call", call, headers={"Authorization": f"Bearer {key}"})
    assert keyed.json()["result"]["isError"] is True
    used = http.get("/api/v1/usage", headers={"X-API-Key": key}).json()["lookup"]
    assert keyed.headers["X-RateLimit-Limit"] == str(used["limit"])
    assert keyed.headers["X-RateLimit-Remaining"] == str(used["remaining"])
    assert int(keyed.headers["X-RateLimit-Reset"]) > 0
    assert (
        keyed.headers["X-Request-ID"] == keyed.json()["result"]["structuredContent"]["request_id"]
    )
    sandbox = rpc(http, "tools/call", call, headers={"X-API-Key": accounts["pro"]["sandbox_key"]})
    assert sandbox.headers["X-Sandbox-Mode"] == "true"
    assert "X-RateLimit-Limit" not in sandbox.headers
    keyless = rpc(http, "tools/call", call, headers={"X-Forwarded-For": client_address()})
    assert keyless.headers["X-Demo-Mode"] == "true"
    assert (
        int(keyless.headers["X-RateLimit-Remaining"])
        == int(keyless.headers["X-RateLimit-Limit"]) - 1
    )
