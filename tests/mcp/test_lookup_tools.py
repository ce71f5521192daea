"""The lookup tools through the official SDK client against a real dev server, each compared
with its REST twin on the same data: the same answer, the same problem code, the same meter
movement (GET /usage). Both handshakes: the current revision ("auto") and `initialize`
("legacy")."""

from __future__ import annotations

import asyncio
import random
import time
from typing import Any

import httpx
import pytest
from mcp_types import CallToolResult

from permitapi.mcp.tools import OPERATION_WAIT_SECONDS
from tests.acceptance.test_lookups_dev_server import SIM, fresh_permit
from tests.mcp.conftest import new_account
from tests.mcp.test_catalogue import TOOL_NAMES
from tests.support.dev_server import DevServer
from tests.support.mcp_client import (
    MODES,
    call_tool,
    list_tools,
    mcp_client,
    meters,
    problem,
    structured,
    without_age,
)

pytestmark = pytest.mark.slow


def call(
    server: DevServer, key: str | None, tool: str, arguments: dict[str, Any], **options: Any
) -> CallToolResult:
    return call_tool(server.base_url, key, tool, arguments, **options)


def lookups(http: httpx.Client, key: str) -> int:
    return meters(http, key)["lookup"]


def unknown_ladbs_number() -> str:
    digits = str(random.randrange(10**14, 10**15))
    return f"{digits[:5]}-{digits[5:10]}-{digits[10:]}"


@pytest.mark.parametrize("mode", MODES)
def test_the_sdk_client_lists_exactly_the_thirteen_tools(server: DevServer, mode: str) -> None:
    listed, version = list_tools(server.base_url, mode=mode)
    assert [tool.name for tool in listed.tools] == TOOL_NAMES
    assert version == ("2026-07-28" if mode == "auto" else "2025-11-25")
    for tool in listed.tools:
        assert tool.input_schema["additionalProperties"] is False
        assert tool.output_schema is not None
        assert tool.annotations is not None


@pytest.mark.parametrize("mode", MODES)
def test_status_is_the_rest_answer_and_meters_alike(
    server: DevServer, http: httpx.Client, accounts: dict[str, dict[str, str]], mode: str
) -> None:
    key = accounts["enterprise"]["live_key"]
    number = fresh_permit(http, "ladbs")
    before = lookups(http, key)
    live = structured(call(server, key, "get_permit_status", {"permit_number": number}))
    assert live["source"] == "live_scrape"
    assert live["permit_number"] == number
    assert lookups(http, key) == before + 1
    rest = http.get(f"/api/v1/permits/{number}/status", headers={"X-API-Key": key})
    assert rest.status_code == 200
    assert lookups(http, key) == before + 2
    cached = structured(
        call(server, key, "get_permit_status", {"permit_number": number}, mode=mode, bearer=False)
    )
    assert cached["source"] == rest.json()["source"] == "cached"
    assert without_age(cached) == without_age(rest.json())
    assert lookups(http, key) == before + 3


def _status_cases() -> list[tuple[dict[str, Any], str, int, int, dict[str, Any]]]:
    """(arguments, code, HTTP status of the REST twin, credits kept, REST query)."""
    missing = unknown_ladbs_number()
    return [
        ({"permit_number": "BLD24-00123"}, "multiple_jurisdictions", 300, 1, {}),
        ({"permit_number": "hello"}, "jurisdiction_not_supported", 404, 1, {}),
        ({"permit_number": missing}, "permit_not_found", 404, 1, {}),
        (
            {"permit_number": "21030-20000-00256", "jurisdiction": "nowhere"},
            "invalid_jurisdiction",
            400,
            0,
            {"jurisdiction": "nowhere"},
        ),
        ({"permit_number": "x" * 65}, "invalid_permit_number", 400, 0, {}),
    ]


def test_status_failures_are_error_results_with_the_rest_code_and_settlement(
    server: DevServer, http: httpx.Client, accounts: dict[str, dict[str, str]]
) -> None:
    key = accounts["enterprise"]["live_key"]
    for arguments, code, status, kept, query in _status_cases():
        before = lookups(http, key)
        failed = problem(call(server, key, "get_permit_status", arguments))
        after_tool = lookups(http, key)
        rest = http.get(
            f"/api/v1/permits/{arguments['permit_number']}/status",
            params=query,
            headers={"X-API-Key": key},
        )
        assert (failed["code"], failed["status"]) == (code, status), failed
        assert (rest.json()["code"], rest.status_code) == (code, status), rest.text
        assert after_tool - before == kept
        assert lookups(http, key) - after_tool == kept
        assert failed["tool"] == "get_permit_status"
        assert failed["request_id"]
        if code == "multiple_jurisdictions":
            assert failed["candidates"] == rest.json()["candidates"][:5]
            assert failed["candidates_total"] == len(rest.json()["candidates"]) > 1
            assert failed["retryable"] is False
            assert "jurisdiction" in failed["next_step"]
            assert "example" not in failed  # REST's example is a path

    # Arguments the tool does not have, or of the wrong JSON type: nothing reserved.
    before = lookups(http, key)
    for arguments in (
        {"permit_number": 21030},
        {"permit_number": "21030-20000-00256", "contractor": "ACME"},
        {},
        {"permit_number": "21030-20000-00256", "force_refresh": "yes"},
    ):
        failed = problem(call(server, key, "get_permit_status", arguments))
        assert failed["code"] == "invalid_arguments", failed
        assert failed["status"] == 400
        assert failed["errors"]
        assert failed["parameter"]
    assert lookups(http, key) == before


def test_force_refresh_needs_a_paid_plan(server: DevServer, http: httpx.Client) -> None:
    free = new_account(server, "free")["live_key"]
    arguments = {"permit_number": "21030-20000-00256", "force_refresh": True}
    failed = problem(call(server, free, "get_permit_status", arguments))
    rest = http.get(
        "/api/v1/permits/21030-20000-00256/status",
        params={"force_refresh": "true"},
        headers={"X-API-Key": free},
    )
    assert failed["code"] == rest.json()["code"] == "force_refresh_not_available"
    assert failed["status"] == rest.status_code == 403
    assert lookups(http, free) == 0


def test_force_refresh_costs_ten_and_may_answer_an_operation(
    server: DevServer, http: httpx.Client, accounts: dict[str, dict[str, str]]
) -> None:
    key = accounts["enterprise"]["live_key"]
    number = fresh_permit(http, "ladbs")
    structured(call(server, key, "get_permit_status", {"permit_number": number}))
    before = lookups(http, key)
    forced = structured(
        call(server, key, "get_permit_status", {"permit_number": number, "force_refresh": True})
    )
    assert forced["source"] == "live_scrape"
    assert lookups(http, key) == before + 10
    accepted = structured(
        call(
            server,
            key,
            "get_permit_status",
            {"permit_number": number, "force_refresh": True, "respond_async": True},
        )
    )
    assert accepted["operation_type"] == "permit_refresh"
    assert accepted["retry_after_seconds"] == 2
    rest = http.get(
        f"/api/v1/permits/{number}/status",
        params={"force_refresh": "true"},
        headers={"X-API-Key": key, "Prefer": "respond-async"},
    )
    assert rest.status_code == 202
    assert set(rest.json()) <= set(accepted)
    assert lookups(http, key) == before + 30
    # respond_async alone is ignored, as REST ignores Prefer without force_refresh.
    plain = {"permit_number": number, "respond_async": True}
    assert structured(call(server, key, "get_permit_status", plain))["source"] == "cached"


def test_portal_down_is_a_retryable_error_result_and_gives_the_credit_back(
    server: DevServer, http: httpx.Client, accounts: dict[str, dict[str, str]]
) -> None:
    # EPIC-LA: the other suites keep LADBS healthy for their lookups.
    key = accounts["enterprise"]["live_key"]
    number = fresh_permit(http, "epicla")
    assert http.post(f"{SIM}/faults", json={"source": "epicla", "mode": "down"}).status_code < 300
    before = lookups(http, key)
    failed = problem(call(server, key, "get_permit_status", {"permit_number": number}))
    rest = http.get(f"/api/v1/permits/{number}/status", headers={"X-API-Key": key})
    assert failed["code"] == rest.json()["code"] == "jurisdiction_unavailable"
    assert failed["status"] == rest.status_code == 503
    assert failed["retryable"] is True
    assert failed["retry_after"] == int(rest.headers["Retry-After"]) > 0
    assert failed["retry_after_seconds"] == failed["retry_after"]
    assert "Retry after" in failed["detail"]
    assert lookups(http, key) == before


@pytest.mark.parametrize("mode", MODES)
def test_a_slow_portal_lookup_is_finished_within_the_call(
    server: DevServer, http: httpx.Client, accounts: dict[str, dict[str, str]], mode: str
) -> None:
    """REST answers a cache miss on an Accela portal with a 202; the tool waits for the
    operation (up to OPERATION_WAIT_SECONDS), reporting progress on an event stream to a client
    that sent a progress token, and answers the status record itself."""
    key = accounts["enterprise"]["live_key"]
    number = fresh_permit(http, "aca:sandiego")
    before = lookups(http, key)
    arguments = {"permit_number": number, "jurisdiction": "aca:sandiego"}
    notes: list[tuple[float, str | None]] = []

    async def progress(done: float, total: float | None, message: str | None) -> None:
        notes.append((done, message))

    async def run() -> CallToolResult:
        async with mcp_client(server.base_url, key, mode=mode) as client:
            return await client.call_tool(
                "get_permit_status", arguments, progress_callback=progress
            )

    started = time.monotonic()
    record = structured(asyncio.run(run()))
    assert time.monotonic() - started < OPERATION_WAIT_SECONDS + 5
    # The wait was reported: at least the first check, while the operation was pending.
    assert notes, "no progress notification"
    assert notes[0][0] == 1
    assert "Reading the portal" in str(notes[0][1])
    assert "operation_id" not in record, record
    assert record["permit_number"] == number
    assert record["jurisdiction"] == "aca:sandiego"
    assert lookups(http, key) == before + 1
    rest = http.get(
        f"/api/v1/permits/{number}/status",
        params={"jurisdiction": "aca:sandiego"},
        headers={"X-API-Key": key},
    ).json()
    assert rest["source"] == "cached"
    assert rest["permit_id"] == record["permit_id"]


def test_an_operation_handed_back_is_polled_with_get_operation(
    server: DevServer, http: httpx.Client, accounts: dict[str, dict[str, str]]
) -> None:
    key = accounts["enterprise"]["live_key"]
    number = fresh_permit(http, "aca:sandiego")
    arguments = {"permit_number": number, "jurisdiction": "aca:sandiego"}
    structured(call(server, key, "get_permit_status", arguments))
    before = meters(http, key)
    forced = {**arguments, "force_refresh": True, "respond_async": True}
    accepted = structured(call(server, key, "get_permit_status", forced))
    operation_id = accepted["operation_id"]
    assert accepted["status"] in ("pending", "running")
    assert f"get_operation with operation_id={operation_id}" in accepted["poll_hint"]
    assert "GET " not in accepted["poll_hint"]
    assert "/api/" not in accepted["poll_hint"]
    deadline = time.monotonic() + 60
    while True:
        polled = structured(call(server, key, "get_operation", {"operation_id": operation_id}))
        if polled["status"] in ("succeeded", "failed") or time.monotonic() > deadline:
            break
        time.sleep(0.3)
    assert polled["status"] == "succeeded", polled
    assert (
        polled["result"]["permit_id"]
        == structured(call(server, key, "get_permit_status", arguments))["permit_id"]
    )
    rest = http.get(f"/api/v1/operations/{operation_id}", headers={"X-API-Key": key}).json()
    assert without_age(rest) == without_age(polled)
    # Polling is free: the forced refresh's 10 credits and the cached read's 1, nothing more.
    assert meters(http, key)["lookup"] == before["lookup"] + 11

    other = accounts["pro"]["live_key"]
    hidden = problem(call(server, other, "get_operation", {"operation_id": operation_id}))
    assert (hidden["code"], hidden["status"]) == ("operation_not_found", 404)
    assert "get_permit_status" in hidden["next_step"]
    keyless = problem(call(server, None, "get_operation", {"operation_id": operation_id}))
    assert keyless["code"] == "invalid_api_key"
    malformed = problem(call(server, key, "get_operation", {"operation_id": "42"}))
    assert malformed["code"] == "invalid_arguments"
    assert "UUID" in malformed["errors"][0]["message"]
    assert "^" not in malformed["detail"]  # no raw regex


@pytest.mark.parametrize("mode", MODES)
def test_batch_is_the_rest_answer_and_meters_alike(
    server: DevServer, http: httpx.Client, accounts: dict[str, dict[str, str]], mode: str
) -> None:
    key = accounts["enterprise"]["live_key"]
    numbers = [fresh_permit(http, "ladbs"), fresh_permit(http, "ladbs")]
    numbers += ["hello", unknown_ladbs_number(), " "]
    before = lookups(http, key)
    first = structured(
        call(server, key, "batch_permit_status", {"permit_numbers": numbers}, mode=mode)
    )
    used_by_tool = lookups(http, key) - before
    rest = http.post(
        "/api/v1/permits/batch-status", json={"permit_numbers": numbers}, headers={"X-API-Key": key}
    )
    assert rest.status_code == 200, rest.text
    used_by_rest = lookups(http, key) - before - used_by_tool
    assert used_by_tool == used_by_rest == 4  # the invalid number is given back
    again = structured(
        call(server, key, "batch_permit_status", {"permit_numbers": numbers}, mode=mode)
    )
    assert [r["source"] for r in first["results"]] == ["live_scrape"] * 2
    assert without_age(again) == without_age(rest.json())
    assert [e["error"] for e in again["errors"]] == [
        "jurisdiction_not_supported",
        "not_found",
        "invalid_permit_number",
    ]

    before = lookups(http, key)
    for size in (0, 26):
        arguments = {"permit_numbers": [numbers[0]] * size}
        failed = problem(call(server, key, "batch_permit_status", arguments))
        refused = http.post(
            "/api/v1/permits/batch-status", json=arguments, headers={"X-API-Key": key}
        )
        assert failed["code"] == refused.json()["code"] == "invalid_batch_size"
        assert failed["status"] == refused.status_code == 400
    failed = problem(call(server, key, "batch_permit_status", {"permit_numbers": "x"}))
    assert failed["code"] == "invalid_arguments"
    assert lookups(http, key) == before


def test_list_jurisdictions_is_public_free_and_the_rest_answer(
    server: DevServer, http: httpx.Client, accounts: dict[str, dict[str, str]]
) -> None:
    key = accounts["enterprise"]["live_key"]
    before = meters(http, key)
    keyless = structured(call(server, None, "list_jurisdictions", {}))
    keyed = structured(call(server, key, "list_jurisdictions", {}))
    rest = http.get("/api/v1/jurisdictions").json()
    assert keyless == keyed == rest
    assert keyless["total"] == len(keyless["jurisdictions"]) > 40
    assert meters(http, key) == before
    failed = problem(call(server, None, "list_jurisdictions", {"state": "CA"}))
    assert failed["code"] == "invalid_arguments"


def test_resolve_permit_is_the_rest_answer_and_free(
    server: DevServer, http: httpx.Client, accounts: dict[str, dict[str, str]]
) -> None:
    key = accounts["enterprise"]["live_key"]
    looked_up = fresh_permit(http, "ladbs")
    structured(call(server, key, "get_permit_status", {"permit_number": looked_up}))
    before = lookups(http, key)
    for arguments in (
        {"permit_number": looked_up},
        {"permit_number": unknown_ladbs_number(), "jurisdiction": "ladbs"},
    ):
        resolved = structured(call(server, key, "resolve_permit", arguments))
        rest = http.post("/api/v1/permit-resolutions", json=arguments, headers={"X-API-Key": key})
        assert rest.status_code == 200, rest.text
        assert resolved == rest.json()
    assert resolved["resource_available"] is False
    assert resolved["status_url"]
    ambiguous = {"permit_number": "BLD24-00123"}
    failed = problem(call(server, key, "resolve_permit", ambiguous))
    rest = http.post("/api/v1/permit-resolutions", json=ambiguous, headers={"X-API-Key": key})
    assert failed["code"] == rest.json()["code"] == "multiple_jurisdictions"
    assert failed["candidates"] == rest.json()["candidates"][:5]
    assert lookups(http, key) == before


def test_canonical_permit_and_details_are_the_rest_answers_at_a_credit_each(
    server: DevServer, http: httpx.Client, accounts: dict[str, dict[str, str]]
) -> None:
    key = accounts["enterprise"]["live_key"]
    auth = {"X-API-Key": key}
    number = fresh_permit(http, "ladbs")
    details = {
        "inspections": [
            {"type": "Foundation", "date": "1901-02-20", "result": "Approved", "inspector": "A"},
            {"type": "Framing", "date": "1901-02-27", "result": "Corrections Issued"},
        ],
        "pending_inspections": [{"type": "Drywall", "date": "1901-03-10"}],
        "conditions": [{"name": "Fire clearance", "status": "Required", "group": "Clearances"}],
        "timeline": [
            {"status": "Submitted", "changed_at": "1901-01-01"},
            {"status": "Issued", "changed_at": "1901-02-15"},
        ],
    }
    assert http.put(f"{SIM}/permits/ladbs/{number}", json=details).status_code == 200
    record = structured(call(server, key, "get_permit_status", {"permit_number": number}))

    before = lookups(http, key)
    canonical = structured(
        call(server, key, "get_canonical_permit", {"permit_id": record["permit_id"]})
    )
    rest = http.get(f"/api/v1/permits/{record['permit_id']}", headers=auth)
    assert without_age(canonical) == without_age(rest.json())
    assert canonical["permit_number"] == number
    assert lookups(http, key) == before + 2
    reads = {}
    for tool, path in (
        ("get_permit_inspections", "inspections"),
        ("get_permit_conditions", "conditions"),
        ("get_permit_history", "history"),
    ):
        before = lookups(http, key)
        reads[path] = structured(call(server, key, tool, {"permit_number": number}))
        rest = http.get(f"/api/v1/permits/{number}/{path}", headers=auth)
        assert rest.status_code == 200, rest.text
        assert without_age(reads[path]) == without_age(rest.json())
        assert lookups(http, key) == before + 2
    assert sorted(i["type"] for i in reads["inspections"]["inspections"]) == [
        "Foundation",
        "Framing",
    ]
    assert reads["inspections"]["pass_rate"] == 0.5
    assert [c["name"] for c in reads["conditions"]["items"]] == ["Fire clearance"]
    assert [e["status"] for e in reads["history"]["timeline"]] == ["Submitted", "Issued"]

    # Nothing stored yet: 404 with the status_url that creates it, the credit given back.
    never = unknown_ladbs_number()
    before = lookups(http, key)
    for tool, path in (("get_permit_history", "history"), ("get_permit_conditions", "conditions")):
        failed = problem(call(server, key, tool, {"permit_number": never}))
        rest = http.get(f"/api/v1/permits/{never}/{path}", headers=auth)
        assert failed["code"] == rest.json()["code"] == "permit_not_found"
        assert rest.json()["status_url"]
        assert "status_url" not in failed
        assert f"get_permit_status with permit_number='{never}'" in failed["next_step"]
    unknown_id = "0b5c5d36-7a52-4c1f-a9c6-2d3f8d1f6a10"
    failed = problem(call(server, key, "get_canonical_permit", {"permit_id": unknown_id}))
    assert failed["code"] == http.get(f"/api/v1/permits/{unknown_id}", headers=auth).json()["code"]
    failed = problem(call(server, key, "get_canonical_permit", {"permit_id": "nope"}))
    assert failed["code"] == "invalid_arguments"
    assert lookups(http, key) == before


def test_every_tool_refuses_arguments_it_does_not_have_at_no_cost(
    server: DevServer, http: httpx.Client, accounts: dict[str, dict[str, str]]
) -> None:
    key = accounts["enterprise"]["live_key"]
    before = meters(http, key)
    valid = {
        "get_permit_status": {"permit_number": "BLD24-00123"},
        "batch_permit_status": {"permit_numbers": ["BLD24-00123"]},
        "search_permits": {"city": "Los Angeles"},
        "resolve_permit": {"permit_number": "BLD24-00123"},
        "get_canonical_permit": {"permit_id": "0b5c5d36-7a52-4c1f-a9c6-2d3f8d1f6a10"},
        "get_permit_inspections": {"permit_number": "BLD24-00123"},
        "get_permit_conditions": {"permit_number": "BLD24-00123"},
        "get_permit_history": {"permit_number": "BLD24-00123"},
        "watch_permit": {"permit_number": "BLD24-00123"},
        "unwatch_permit": {"permit_number": "BLD24-00123"},
        "get_operation": {"operation_id": "0b5c5d36-7a52-4c1f-a9c6-2d3f8d1f6a10"},
    }
    for tool in TOOL_NAMES:
        arguments = {**valid.get(tool, {}), "verbose": True}
        failed = problem(call(server, key, tool, arguments))
        assert (failed["code"], failed["status"]) == ("invalid_arguments", 400), tool
        assert failed["parameter"] == "verbose"
        assert failed["errors"][0]["location"] == "arguments"
        assert failed["retryable"] is False
    for tool in ("get_permit_status", "resolve_permit", "watch_permit", "get_permit_history"):
        failed = problem(call(server, key, tool, {"permit_number": ["21030-20000-00256"]}))
        assert failed["code"] == "invalid_arguments", tool
    assert meters(http, key) == before
