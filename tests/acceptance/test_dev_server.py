"""Black-box acceptance: a real `permitapi dev` server, driven only over HTTP and the CLI.

The server is started as the README's run command starts it (`permitapi dev`, here with a free
port), in a throw-away working directory so its `./var` is its own: once on its embedded SQLite
default and once with PERMITAPI_DATABASE_URL naming a fresh PostgreSQL database (the
`server` fixture in conftest.py).
"""

from __future__ import annotations

import json
import re
import time
from datetime import UTC, datetime

import httpx
import pytest

from tests.support.dev_server import DevServer
from tests.support.problems import assert_problem

pytestmark = pytest.mark.slow


def test_public_endpoints_answer_without_a_key(http: httpx.Client) -> None:
    directory = http.get("/api/v1/jurisdictions")
    assert directory.status_code == 200
    body = directory.json()
    assert body["total"] == len(body["jurisdictions"]) >= 44
    slugs = {j["slug"] for j in body["jurisdictions"]}
    assert {"ladbs", "epicla", "aca:sandiego", "aca:charlotte"} <= slugs
    assert all(j["active_permits_count"] == 0 for j in body["jurisdictions"])
    assert "x-ratelimit-limit" not in directory.headers
    assert http.get("/api/v1/jurisdictions/requests").json().keys() == {"requests"}
    asked = http.post(
        "/api/v1/jurisdictions/request", json={"jurisdiction_name": "Bend", "state": "OR"}
    )
    assert asked.status_code == 200
    assert asked.json()["estimated_timeline"]
    assert http.get("/healthz").json() == {"status": "ok"}
    assert http.get("/readyz").json() == {"status": "ready"}
    assert http.get("/openapi.json").json()["openapi"].startswith("3.1")
    assert "/_docs-assets/" in http.get("/docs").text


def test_error_paths_are_problems(http: httpx.Client) -> None:
    body = assert_problem(http.get("/api/v1/no-such-thing"), 404, "not_found")
    assert body["instance"] == "/api/v1/no-such-thing"
    wrong = http.delete("/api/v1/jurisdictions")
    assert_problem(wrong, 405, "method_not_allowed")
    assert "GET" in wrong.headers["allow"]
    limit = assert_problem(
        http.get("/api/v1/jurisdictions/requests", params={"limit": "lots"}),
        400,
        "invalid_parameter",
    )
    assert limit["parameter"] == "limit"
    state = assert_problem(
        http.post(
            "/api/v1/jurisdictions/request", json={"jurisdiction_name": "Bend", "state": "Q"}
        ),
        400,
        "invalid_state",
    )
    assert state["parameter"] == "state"
    assert_problem(
        http.post(
            "/api/v1/jurisdictions/request",
            content=b"{",
            headers={"Content-Type": "application/json"},
        ),
        400,
        "invalid_body",
    )
    assert_problem(
        http.post(
            "/api/v1/jurisdictions/request",
            json={"jurisdiction_name": "Bend", "state": "OR"},
            headers={"Idempotency-Key": "x" * 300},
        ),
        400,
        "invalid_idempotency_key",
    )


def test_missing_invalid_and_deactivated_keys_are_401(
    server: DevServer, http: httpx.Client
) -> None:
    assert_problem(http.get("/api/v1/usage"), 401, "invalid_api_key")
    assert_problem(
        http.get("/api/v1/usage", headers={"X-API-Key": "sk_live_wrong"}), 401, "invalid_api_key"
    )
    created = server.cli("keys", "create", "--plan", "developer", "--json")
    assert created.returncode == 0, created.stderr
    key = json.loads(created.stdout)["live_key"]
    assert http.get("/api/v1/usage", headers={"X-API-Key": key}).json()["plan"] == "developer"
    deactivated = server.cli("keys", "deactivate", key)
    assert deactivated.returncode == 0, deactivated.stderr
    assert_problem(http.get("/api/v1/usage", headers={"X-API-Key": key}), 401, "invalid_api_key")


def test_request_ids_are_echoed_when_valid(http: httpx.Client) -> None:
    assert (
        http.get("/healthz", headers={"X-Request-ID": "trace.abc-123_x"}).headers["x-request-id"]
        == "trace.abc-123_x"
    )
    fresh = http.get("/healthz", headers={"X-Request-ID": "bad id"}).headers["x-request-id"]
    assert fresh != "bad id"
    assert re.fullmatch(r"[A-Za-z0-9._-]{8,128}", fresh)
    problem = http.get("/nowhere", headers={"X-Request-ID": "trace-problem-1"})
    assert problem.json()["request_id"] == "trace-problem-1"


def test_rate_limit_headers_and_sandbox_mode(server: DevServer, http: httpx.Client) -> None:
    free = server.keys["free"]
    usage = http.get("/api/v1/usage", headers={"X-API-Key": free["live_key"]})
    assert usage.status_code == 200
    now = datetime.now(UTC)
    next_month = datetime(now.year + now.month // 12, now.month % 12 + 1, 1, tzinfo=UTC)
    assert usage.headers["x-ratelimit-limit"] == "200"
    assert usage.headers["x-ratelimit-remaining"] == "200"
    assert usage.headers["x-ratelimit-reset"] == str(int(next_month.timestamp()))
    sandbox = http.get("/api/v1/usage", headers={"X-API-Key": free["sandbox_key"]})
    assert sandbox.headers["x-sandbox-mode"] == "true"
    assert "x-ratelimit-limit" not in sandbox.headers
    pro = http.get("/api/v1/usage", headers={"X-API-Key": server.keys["pro"]["live_key"]})
    assert pro.json()["plan"] == "pro"
    assert pro.headers["x-ratelimit-limit"] == "25000"


def test_free_plan_burst_of_three_per_minute(server: DevServer, http: httpx.Client) -> None:
    key = {"X-API-Key": server.keys["free"]["live_key"]}
    before = http.get("/api/v1/usage", headers=key).json()
    started = time.time()
    for n in range(3):
        ok = http.post(
            "/api/v1/jurisdictions/request",
            json={"jurisdiction_name": f"Burstville {'abc'[n]}", "state": "OR"},
            headers=key,
        )
        assert ok.status_code == 200, ok.text
        assert ok.headers["x-ratelimit-limit"] == "200"
    fourth = http.post(
        "/api/v1/jurisdictions/request",
        json={"jurisdiction_name": "Burstville D", "state": "OR"},
        headers=key,
    )
    elapsed = time.time() - started
    body = assert_problem(fourth, 429, "burst_limit_exceeded")
    retry_after = int(fourth.headers["retry-after"])
    assert body["retry_after_seconds"] == retry_after
    # The window opened with the first call: it frees up 60 s after it, not later, not sooner.
    assert 60 - elapsed - 2 <= retry_after <= 60
    assert fourth.headers["x-ratelimit-limit"] == "200"
    # Burst refusals and these free calls cost nothing: GET /usage has not moved (and is itself
    # never burst-limited).
    after = http.get("/api/v1/usage", headers=key)
    assert after.status_code == 200
    assert after.json() == before
    assert (before["lookup"]["used"], before["discovery"]["used"]) == (0, 0)
