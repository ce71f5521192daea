"""Answers an agent can act on, through the official SDK client against a dev server: recovery
hints that name tools and arguments (never REST paths), `did_you_mean` for an unknown slug (on
REST too), an ambiguous number cut to five ranked candidates with the total and how to narrow,
arguments checked before entitlements and before the demo counts a call, demo and sandbox
answers that say the number is not in their dataset, and MCP calls in /metrics."""

from __future__ import annotations

import re
from typing import Any

import httpx
import pytest
from mcp_types import CallToolResult

from tests.mcp.conftest import DEMO_CALLS_PER_DAY, client_address, new_account
from tests.support.dev_server import DevServer
from tests.support.mcp_client import call_tool, meters, problem, structured

pytestmark = pytest.mark.slow

AMBIGUOUS = "BLD24-00123"  # 72 Accela jurisdictions share its format
NOT_IN_DEMO = "21030-20000-99999"
REST_PATH = re.compile(r"/api/v1|\b(GET|POST|DELETE|PUT) /")


def call(
    server: DevServer, key: str | None, tool: str, arguments: dict[str, Any], **options: Any
) -> CallToolResult:
    return call_tool(server.base_url, key, tool, arguments, **options)


def assert_no_rest_path(failed: dict[str, Any]) -> None:
    for member in ("detail", "next_step"):
        assert not REST_PATH.search(str(failed.get(member, ""))), failed
    assert "status_url" not in failed
    assert "example" not in failed


def test_an_unknown_slug_suggests_the_closest_ones_on_mcp_and_rest(
    server: DevServer, http: httpx.Client, accounts: dict[str, dict[str, str]]
) -> None:
    key = accounts["enterprise"]["live_key"]
    for typed, meant in (("ladbz", "ladbs"), ("sandiego", "aca:sandiego"), ("epic-la", "epicla")):
        arguments = {"permit_number": "21030-20000-00256", "jurisdiction": typed}
        failed = problem(call(server, key, "get_permit_status", arguments))
        assert (failed["code"], failed["status"]) == ("invalid_jurisdiction", 400)
        assert failed["did_you_mean"][0] == meant, failed
        assert len(failed["did_you_mean"]) <= 3
        assert f"jurisdiction='{meant}'" in failed["next_step"]
        assert "list_jurisdictions" in failed["detail"]
        assert_no_rest_path(failed)
        rest = http.get(
            "/api/v1/permits/21030-20000-00256/status",
            params={"jurisdiction": typed},
            headers={"X-API-Key": key},
        )
        assert rest.status_code == 400
        assert rest.json()["did_you_mean"] == failed["did_you_mean"]
    nothing_close = {"permit_number": "21030-20000-00256", "jurisdiction": "zzzzqqq"}
    failed = problem(call(server, key, "resolve_permit", nothing_close))
    assert failed["did_you_mean"] == []
    assert "list_jurisdictions" in failed["next_step"]


def test_an_ambiguous_number_answers_five_ranked_candidates_and_how_to_narrow(
    server: DevServer, http: httpx.Client, accounts: dict[str, dict[str, str]]
) -> None:
    key = accounts["enterprise"]["live_key"]
    result = call(server, key, "get_permit_status", {"permit_number": AMBIGUOUS})
    failed = problem(result)
    rest = http.get(f"/api/v1/permits/{AMBIGUOUS}/status", headers={"X-API-Key": key}).json()
    assert failed["code"] == "multiple_jurisdictions"
    assert len(rest["candidates"]) > 5
    assert failed["candidates"] == rest["candidates"][:5]  # REST's ranking, the strongest first
    assert failed["candidates_total"] == len(rest["candidates"])
    assert "near=" in failed["next_step"]
    assert "jurisdiction" in failed["next_step"]
    assert_no_rest_path(failed)
    assert result.structured_content is not None
    assert len(str(result.model_dump_json())) < 6000  # was about 20 KB with every candidate
    text = getattr(result.content[0], "text", "")
    assert f"5 of {len(rest['candidates'])} candidates shown" in text

    # The suggested narrowing works: near= reorders, a candidate's slug answers.
    near = {"permit_number": AMBIGUOUS, "near": "32.7157,-117.1611"}
    ranked = problem(call(server, key, "get_permit_status", near))
    assert len(ranked["candidates"]) == 5
    assert ranked["candidates"] != failed["candidates"]
    chosen = {"permit_number": AMBIGUOUS, "jurisdiction": ranked["candidates"][0]["slug"]}
    resolved = structured(call(server, key, "resolve_permit", chosen))
    assert resolved["permit_id"] == ranked["candidates"][0]["permit_id"]


def test_arguments_are_checked_before_entitlements(
    server: DevServer, http: httpx.Client, accounts: dict[str, dict[str, str]]
) -> None:
    sandbox = accounts["free"]["sandbox_key"]
    free = new_account(server, "free")["live_key"]
    mistyped = {"permit_number": "21030-20000-00256", "jurisdiction": "ladbz"}
    # A sandbox key may not read history, a free key may not force a refresh: the mistake in
    # the arguments is what the agent hears about first.
    failed = problem(call(server, sandbox, "get_permit_history", mistyped))
    assert failed["code"] == "invalid_jurisdiction", failed
    failed = problem(call(server, free, "get_permit_status", {**mistyped, "force_refresh": True}))
    assert failed["code"] == "invalid_jurisdiction", failed
    failed = problem(call(server, free, "watch_permit", {"permit_number": "x" * 65}))
    assert failed["code"] == "invalid_permit_number"
    assert meters(http, free)["lookup"] == 0

    # Malformed keyless calls do not use up the demo's daily calls.
    mine = {"X-Forwarded-For": client_address()}
    for _ in range(DEMO_CALLS_PER_DAY + 1):
        bad = problem(call(server, None, "get_permit_status", {"permit_number": 1}, headers=mine))
        assert bad["code"] == "invalid_arguments"
        bad = problem(call(server, None, "get_permit_status", mistyped, headers=mine))
        assert bad["code"] == "invalid_jurisdiction"
    good = {"permit_number": "21030-20000-00256"}
    assert not call(server, None, "get_permit_status", good, headers=mine).is_error


def test_a_bad_permit_id_says_what_one_looks_like(
    server: DevServer, accounts: dict[str, dict[str, str]]
) -> None:
    key = accounts["enterprise"]["live_key"]
    failed = problem(call(server, key, "get_canonical_permit", {"permit_id": "21030-20000-00256"}))
    assert failed["code"] == "invalid_arguments"
    message = failed["errors"][0]["message"]
    assert "UUID" in message
    assert "resolve_permit" in message
    assert "pattern" not in failed["detail"]
    assert "[0-9a-f" not in failed["detail"]
    assert "tools/list" in failed["next_step"]


@pytest.mark.parametrize("keyless", [True, False], ids=["demo", "sandbox"])
def test_a_number_outside_the_dataset_is_not_called_missing(
    server: DevServer, http: httpx.Client, accounts: dict[str, dict[str, str]], keyless: bool
) -> None:
    key = None if keyless else accounts["pro"]["sandbox_key"]
    headers = {"X-Forwarded-For": client_address()}
    dataset = "demo" if keyless else "sandbox"
    for arguments in (
        {"permit_number": NOT_IN_DEMO},
        {"permit_number": "PMT-9", "jurisdiction": "aca:sandiego"},
    ):
        failed = problem(call(server, key, "get_permit_status", arguments, headers=headers))
        assert failed["code"] == "permit_not_found"
        assert f"not in the {dataset} dataset" in failed["detail"]
        assert "has no permit" not in failed["detail"]
        assert "may well exist" in failed["detail"]
        assert failed["dataset"] == dataset
        assert failed["try_numbers"]
        assert "live" in failed["next_step"]
        assert "sk_live_" in failed["next_step"]
        assert_no_rest_path(failed)
    # The suggested numbers answer, and REST words the miss the same way.
    first = {"permit_number": failed["try_numbers"][0], "jurisdiction": "aca:sandiego"}
    assert structured(call(server, key, "get_permit_status", first, headers=headers))
    rest_headers = {**headers, **({} if key is None else {"X-API-Key": key})}
    rest = http.get(f"/api/v1/permits/{NOT_IN_DEMO}/status", headers=rest_headers)
    assert (rest.status_code, rest.json()["code"]) == (404, "permit_not_found")
    assert f"not in the {dataset} dataset" in rest.json()["detail"]
    assert (
        rest.json()["try_numbers"]
        == problem(
            call(server, key, "get_permit_status", {"permit_number": NOT_IN_DEMO}, headers=headers)
        )["try_numbers"]
    )


def _sample(metrics: str, name: str, **labels: str) -> float:
    for line in metrics.splitlines():
        if line.startswith(f"{name}{{") and all(f'{k}="{v}"' in line for k, v in labels.items()):
            return float(line.rsplit(" ", 1)[1])
    return 0.0  # a labelled child that never counted is not exported


def test_tool_calls_are_counted_per_tool_and_outcome(
    server: DevServer, http: httpx.Client, accounts: dict[str, dict[str, str]]
) -> None:
    key = accounts["enterprise"]["live_key"]
    before = http.get("/metrics").text
    structured(call(server, key, "list_jurisdictions", {}))
    structured(call(server, key, "list_jurisdictions", {}))
    problem(call(server, key, "resolve_permit", {"permit_number": AMBIGUOUS}))
    problem(call(server, key, "list_jurisdictions", {"state": "CA"}))
    after = http.get("/metrics").text
    counter = "permitapi_mcp_tool_calls_total"
    for labels, calls in (
        ({"tool": "list_jurisdictions", "outcome": "ok"}, 2),
        ({"tool": "resolve_permit", "outcome": "multiple_jurisdictions"}, 1),
        ({"tool": "list_jurisdictions", "outcome": "invalid_arguments"}, 1),
    ):
        assert _sample(after, counter, **labels) - _sample(before, counter, **labels) == calls
    # The HTTP counter names the tool server's route, not "unmatched".
    requests = "permitapi_http_requests_total"
    mcp = {"route": "/mcp", "method": "POST", "status": "200"}
    assert _sample(after, requests, **mcp) - _sample(before, requests, **mcp) >= 4
