"""search_permits and the three watch tools through the official SDK client against a real dev
server, each compared with its REST twin: the same answers and problem codes, the discovery
meter moving alike, watches costing nothing."""

from __future__ import annotations

from typing import Any

import httpx
import pytest
from mcp_types import CallToolResult

from tests.acceptance.test_lookups_dev_server import fresh_permit
from tests.mcp.conftest import new_account
from tests.support.dev_server import DevServer
from tests.support.mcp_client import MODES, call_tool, meters, problem, structured

pytestmark = pytest.mark.slow


def call(
    server: DevServer, key: str | None, tool: str, arguments: dict[str, Any], **options: Any
) -> CallToolResult:
    return call_tool(server.base_url, key, tool, arguments, **options)


def searches(http: httpx.Client, key: str) -> int:
    return meters(http, key)["discovery"]


def comparable(page: dict[str, Any]) -> dict[str, Any]:
    """A page without its cursor (signed with the moment it was made)."""
    return {**page, "pagination": {"has_more": page["pagination"]["has_more"]}}


@pytest.mark.parametrize("mode", MODES)
def test_search_is_the_rest_page_at_one_search_each(
    server: DevServer, http: httpx.Client, accounts: dict[str, dict[str, str]], mode: str
) -> None:
    key = accounts["enterprise"]["live_key"]
    criteria = {"city": "Los Angeles", "permit_type": "Building", "limit": 3}
    before = meters(http, key)
    page = structured(call(server, key, "search_permits", criteria, mode=mode))
    assert searches(http, key) == before["discovery"] + 1
    rest = http.get("/api/v1/permits/search", params=criteria, headers={"X-API-Key": key})
    assert rest.status_code == 200, rest.text
    assert searches(http, key) == before["discovery"] + 2
    assert comparable(page) == comparable(rest.json())
    assert page["result_count"] == len(page["results"]) == 3
    assert {hit["jurisdiction"] for hit in page["results"]} == {"ladbs"}
    assert page["pagination"]["has_more"] is True

    following = structured(
        call(
            server,
            key,
            "search_permits",
            {**criteria, "cursor": page["pagination"]["next_cursor"]},
            mode=mode,
        )
    )
    assert following["results"]
    assert {h["permit_number"] for h in following["results"]}.isdisjoint(
        h["permit_number"] for h in page["results"]
    )
    assert searches(http, key) == before["discovery"] + 3
    assert meters(http, key)["lookup"] == before["lookup"]


def test_search_refusals_carry_the_rest_codes_and_cost_nothing(
    server: DevServer, http: httpx.Client, accounts: dict[str, dict[str, str]]
) -> None:
    key = accounts["enterprise"]["live_key"]
    before = searches(http, key)
    for criteria, code in (
        ({}, "filter_required"),
        ({"zip": "9001"}, "invalid_zip"),
        ({"city": "Pasadena"}, "invalid_city"),
        ({"jurisdiction": "aca:sandiego"}, "invalid_jurisdiction"),
        ({"city": "Los Angeles", "county": "Los Angeles County"}, "conflicting_scope"),
        ({"lat": 34.05}, "incomplete_radius"),
        ({"parcel": ["12"]}, "invalid_parcel"),
        ({"city": "Los Angeles", "cursor": "forged"}, "invalid_cursor"),
    ):
        failed = problem(call(server, key, "search_permits", criteria))
        rest = http.get("/api/v1/permits/search", params=criteria, headers={"X-API-Key": key})
        assert failed["code"] == rest.json()["code"] == code, (criteria, failed, rest.text)
        assert failed["status"] == rest.status_code == 400
    # A people filter is no argument of the tool (REST: 400 unsupported_filter).
    failed = problem(call(server, key, "search_permits", {"contractor": "ACME"}))
    assert failed["code"] == "invalid_arguments"
    assert failed["parameter"] == "contractor"
    assert searches(http, key) == before


def test_the_monthly_discovery_allowance_is_shared_with_rest(
    server: DevServer, http: httpx.Client
) -> None:
    """A pro key without the add-on has the free allowance of searches: the tool and REST
    spend the same meter, and the refusal is an error result with the upgrade hint."""
    key = new_account(server, "pro")["live_key"]
    allowance = http.get("/api/v1/usage", headers={"X-API-Key": key}).json()["discovery"]["limit"]
    criteria = {"city": "Los Angeles", "limit": 1}
    for _ in range(allowance - 1):
        structured(call(server, key, "search_permits", criteria))
    assert (
        http.get("/api/v1/permits/search", params=criteria, headers={"X-API-Key": key}).status_code
        == 200
    )
    failed = problem(call(server, key, "search_permits", criteria))
    assert failed["code"] == "rate_limit_exceeded"
    assert failed["status"] == 429
    assert failed["upgrade_hint"]
    assert failed["retryable"] is False
    assert searches(http, key) == allowance
    refused = http.get("/api/v1/permits/search", params=criteria, headers={"X-API-Key": key})
    assert (refused.status_code, refused.json()["code"]) == (429, "rate_limit_exceeded")


def test_sandbox_keys_cannot_search(
    server: DevServer, http: httpx.Client, accounts: dict[str, dict[str, str]]
) -> None:
    key = accounts["enterprise"]["sandbox_key"]
    criteria = {"city": "Los Angeles"}
    failed = problem(call(server, key, "search_permits", criteria))
    rest = http.get("/api/v1/permits/search", params=criteria, headers={"X-API-Key": key})
    assert failed["code"] == rest.json()["code"] == "sandbox_not_supported"
    assert failed["status"] == rest.status_code == 403


@pytest.mark.parametrize("mode", MODES)
def test_watch_tools_are_the_rest_answers_and_cost_nothing(
    server: DevServer, http: httpx.Client, mode: str
) -> None:
    key = new_account(server, "pro")["live_key"]
    auth = {"X-API-Key": key}
    number = fresh_permit(http, "ladbs")
    before = meters(http, key)

    first = structured(call(server, key, "watch_permit", {"permit_number": number}, mode=mode))
    assert first["newly_watched"] is True
    assert first["watching"] is True
    assert first["warning"]  # no webhook yet
    again = structured(call(server, key, "watch_permit", {"permit_number": number}, mode=mode))
    assert again["newly_watched"] is False
    assert again["created_at"] == first["created_at"]
    rest = http.post(f"/api/v1/permits/{number}/watch", headers=auth)
    assert rest.status_code == 200, rest.text  # already watching
    assert {k: v for k, v in again.items() if k != "newly_watched"} == rest.json()

    listed = structured(call(server, key, "list_watches", {}, mode=mode))
    assert listed == http.get("/api/v1/permits/watches", headers=auth).json()
    assert [w["permit_number"] for w in listed["watches"]] == [number]
    assert (listed["plan_limit"], listed["remaining"]) == (50, 49)

    removed = structured(call(server, key, "unwatch_permit", {"permit_number": number}, mode=mode))
    assert removed == {"status": "unwatched", "permit_number": number}
    failed = problem(call(server, key, "unwatch_permit", {"permit_number": number}, mode=mode))
    rest = http.delete(f"/api/v1/permits/{number}/watch", headers=auth)
    assert failed["code"] == rest.json()["code"] == "watch_not_found"
    assert failed["status"] == rest.status_code == 404
    assert structured(call(server, key, "list_watches", {}))["total"] == 0

    ambiguous = problem(call(server, key, "watch_permit", {"permit_number": "BLD24-00123"}))
    rest = http.post("/api/v1/permits/BLD24-00123/watch", headers=auth)
    assert ambiguous["code"] == rest.json()["code"] == "multiple_jurisdictions"
    assert ambiguous["candidates"] == rest.json()["candidates"][:5]
    assert ambiguous["candidates_total"] == len(rest.json()["candidates"])
    assert meters(http, key) == before


def test_the_plan_caps_active_watches(server: DevServer, http: httpx.Client) -> None:
    key = new_account(server, "free")["live_key"]
    first, second = fresh_permit(http, "ladbs"), fresh_permit(http, "ladbs")
    assert structured(call(server, key, "watch_permit", {"permit_number": first}))["watching"]
    failed = problem(call(server, key, "watch_permit", {"permit_number": second}))
    rest = http.post(f"/api/v1/permits/{second}/watch", headers={"X-API-Key": key})
    assert failed["code"] == rest.json()["code"] == "watch_limit_reached"
    assert failed["plan_limit"] == rest.json()["plan_limit"] == 1
    assert failed["upgrade_hint"]
    listed = structured(call(server, key, "list_watches", {}))
    assert (listed["total"], listed["remaining"]) == (1, 0)


def test_watches_need_a_live_key(
    server: DevServer, http: httpx.Client, accounts: dict[str, dict[str, str]]
) -> None:
    sandbox = accounts["enterprise"]["sandbox_key"]
    for tool, arguments in (
        ("watch_permit", {"permit_number": "21030-20000-00256"}),
        ("unwatch_permit", {"permit_number": "21030-20000-00256"}),
        ("list_watches", {}),
    ):
        refused = problem(call(server, sandbox, tool, arguments))
        assert (refused["code"], refused["status"]) == ("sandbox_not_supported", 403)
        keyless = problem(call(server, None, tool, arguments))
        assert (keyless["code"], keyless["status"]) == ("invalid_api_key", 401)
        assert "live API key" in keyless["detail"]
    rest = http.get("/api/v1/permits/watches", headers={"X-API-Key": sandbox})
    assert rest.json()["code"] == "sandbox_not_supported"
    assert http.get("/api/v1/permits/watches").json()["code"] == "invalid_api_key"
