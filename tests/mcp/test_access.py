"""Who may call what: keys as `Authorization: Bearer` or `X-API-Key`, refused keys, the burst
window shared with REST, sandbox keys, and the keyless demo (the sandbox's dataset under the
demo's per-address daily cap, shared with REST's keyless calls)."""

from __future__ import annotations

from typing import Any

import httpx
import pytest
from mcp_types import CallToolResult

from tests.mcp.conftest import DEMO_CALLS_PER_DAY, client_address, new_account
from tests.support.dev_server import DevServer
from tests.support.mcp_client import call_tool, meters, problem, structured, without_age

pytestmark = pytest.mark.slow

DEMO_NUMBER = "21030-20000-00256"


def call(
    server: DevServer, key: str | None, tool: str, arguments: dict[str, Any], **options: Any
) -> CallToolResult:
    return call_tool(server.base_url, key, tool, arguments, **options)


def test_a_key_works_as_bearer_or_x_api_key_and_both_meter_alike(
    server: DevServer, http: httpx.Client, accounts: dict[str, dict[str, str]]
) -> None:
    key = accounts["enterprise"]["live_key"]
    before = meters(http, key)["lookup"]
    as_bearer = call(server, key, "get_permit_status", {"permit_number": "BLD24-00123"})
    as_header = call(
        server, key, "get_permit_status", {"permit_number": "BLD24-00123"}, bearer=False
    )
    assert problem(as_bearer)["candidates"] == problem(as_header)["candidates"]
    assert meters(http, key)["lookup"] == before + 2
    agreeing = {"X-API-Key": key}
    assert not call(server, key, "list_watches", {}, headers=agreeing).is_error


def test_refused_keys_are_invalid_api_key_results(
    server: DevServer, http: httpx.Client, accounts: dict[str, dict[str, str]]
) -> None:
    live = accounts["enterprise"]["live_key"]
    arguments = {"permit_number": DEMO_NUMBER}
    for key, headers in (
        ("sk_live_" + "x" * 32, {}),
        ("not-a-key", {}),
        (live, {"X-API-Key": accounts["pro"]["live_key"]}),  # two different keys
        (None, {"Authorization": "Basic dXNlcjpwYXNz"}),
        (None, {"X-API-Key": ""}),
    ):
        for tool in ("get_permit_status", "watch_permit"):
            refused = problem(call(server, key, tool, arguments, headers=headers))
            assert (refused["code"], refused["status"]) == ("invalid_api_key", 401), headers

    deactivated = new_account(server, "pro")["live_key"]
    assert not call(server, deactivated, "list_watches", {}).is_error
    assert server.cli("keys", "deactivate", deactivated).returncode == 0
    refused = problem(call(server, deactivated, "list_watches", {}))
    assert refused["code"] == "invalid_api_key"
    rest = http.get("/api/v1/permits/watches", headers={"X-API-Key": deactivated})
    assert (rest.status_code, rest.json()["code"]) == (401, "invalid_api_key")


def test_the_burst_window_is_shared_with_rest(server: DevServer, http: httpx.Client) -> None:
    """Free plan: 3 calls a minute, counted across the tool server and REST; watches, like
    their REST twins, are not burst-limited."""
    key = new_account(server, "free")["live_key"]
    arguments = {"permit_number": DEMO_NUMBER, "jurisdiction": "ladbs"}
    for _ in range(2):
        assert not call(server, key, "resolve_permit", arguments).is_error
    assert (
        http.post(
            "/api/v1/permit-resolutions", json=arguments, headers={"X-API-Key": key}
        ).status_code
        == 200
    )
    refused = problem(call(server, key, "resolve_permit", arguments))
    assert (refused["code"], refused["status"]) == ("burst_limit_exceeded", 429)
    assert refused["retryable"] is True
    assert 0 < refused["retry_after"] <= 60
    assert refused["retry_after_seconds"] == refused["retry_after"]
    rest = http.post("/api/v1/permit-resolutions", json=arguments, headers={"X-API-Key": key})
    assert (rest.status_code, rest.json()["code"]) == (429, "burst_limit_exceeded")
    assert not call(server, key, "list_watches", {}).is_error
    assert meters(http, key)["lookup"] == 0


def test_sandbox_keys_get_the_curated_dataset_unmetered(
    server: DevServer, http: httpx.Client, accounts: dict[str, dict[str, str]]
) -> None:
    sandbox = accounts["free"]["sandbox_key"]
    auth = {"X-API-Key": sandbox}
    answer = structured(call(server, sandbox, "get_permit_status", {"permit_number": DEMO_NUMBER}))
    rest = http.get(f"/api/v1/permits/{DEMO_NUMBER}/status", headers=auth)
    assert rest.headers["X-Sandbox-Mode"] == "true"
    assert without_age(answer) == without_age(rest.json())
    numbers = [DEMO_NUMBER, "BLD24-00123", "hello"]
    batch = structured(call(server, sandbox, "batch_permit_status", {"permit_numbers": numbers}))
    rest = http.post("/api/v1/permits/batch-status", json={"permit_numbers": numbers}, headers=auth)
    assert without_age(batch) == without_age(rest.json())
    refused = problem(call(server, sandbox, "get_permit_history", {"permit_number": DEMO_NUMBER}))
    rest = http.get(f"/api/v1/permits/{DEMO_NUMBER}/history", headers=auth)
    assert refused["code"] == rest.json()["code"]
    assert refused["status"] == rest.status_code
    usage = http.get("/api/v1/usage", headers=auth).json()
    assert usage["lookup"]["used"] == 0


def test_keyless_read_tools_answer_from_the_demo_dataset(
    server: DevServer, http: httpx.Client, accounts: dict[str, dict[str, str]]
) -> None:
    mine = {"X-Forwarded-For": client_address()}
    answer = structured(
        call(server, None, "get_permit_status", {"permit_number": DEMO_NUMBER}, headers=mine)
    )
    rest = http.get(
        f"/api/v1/permits/{DEMO_NUMBER}/status", headers={"X-Forwarded-For": client_address()}
    )
    assert rest.headers["X-Demo-Mode"] == "true"
    assert without_age(answer) == without_age(rest.json())
    sandbox = http.get(
        f"/api/v1/permits/{DEMO_NUMBER}/status",
        headers={"X-API-Key": accounts["free"]["sandbox_key"]},
    )
    assert without_age(answer) == without_age(sandbox.json())

    batch = structured(
        call(
            server,
            None,
            "batch_permit_status",
            {"permit_numbers": [DEMO_NUMBER, "21030-20000-99999"]},
            headers=mine,
        )
    )
    assert [r["permit_number"] for r in batch["results"]] == [DEMO_NUMBER]
    assert [e["error"] for e in batch["errors"]] == ["not_found"]
    resolved = structured(
        call(server, None, "resolve_permit", {"permit_number": DEMO_NUMBER}, headers=mine)
    )
    assert resolved["permit_id"] == answer["permit_id"]
    assert resolved["resource_available"] is False
    refused = problem(call(server, None, "search_permits", {"city": "Los Angeles"}, headers=mine))
    assert refused["code"] == "sandbox_not_supported"
    assert "Without an API key" in refused["detail"]

    # The fifth keyless call of the day from this address is the last one.
    unknown = call(server, None, "get_permit_status", {"permit_number": "hello"}, headers=mine)
    assert problem(unknown)["code"] == "jurisdiction_not_supported"
    over = problem(
        call(server, None, "get_permit_status", {"permit_number": DEMO_NUMBER}, headers=mine)
    )
    assert (over["code"], over["status"]) == ("demo_limit_exceeded", 429)
    assert over["retryable"] is True
    assert over["retry_after"] > 0
    assert str(DEMO_CALLS_PER_DAY) in over["detail"]
    # REST's keyless calls count in the same window; another address still has its own, and
    # the public directory is not a demo call.
    rest = http.get(f"/api/v1/permits/{DEMO_NUMBER}/status", headers=mine)
    assert (rest.status_code, rest.json()["code"]) == (429, "demo_limit_exceeded")
    other = {"X-Forwarded-For": client_address()}
    arguments = {"permit_number": DEMO_NUMBER}
    assert not call(server, None, "get_permit_status", arguments, headers=other).is_error
    assert not call(server, None, "list_jurisdictions", {}, headers=mine).is_error
