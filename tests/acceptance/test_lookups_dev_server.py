"""Black-box acceptance of status lookups: a real `permitapi dev` server (in-process worker)
against the portal simulator it mounts at /_sim, driven only over HTTP. Every behaviour is
checked with the simulator's request counts and the key's usage meter."""

from __future__ import annotations

import json
import random
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import httpx
import pytest

from tests.support.dev_server import DevServer

pytestmark = pytest.mark.slow
SIM = "/_sim/_control"


@pytest.fixture(scope="module")
def accounts(server: DevServer) -> dict[str, dict[str, str]]:
    """This module's own accounts (the dev server's ready-made keys are shared with other
    modules, and the free plan's burst window is 3 calls a minute)."""
    made = {}
    for plan in ("free", "pro", "enterprise"):
        created = server.cli("keys", "create", "--plan", plan, "--json")
        assert created.returncode == 0, created.stderr
        made[plan] = json.loads(created.stdout)
    return made


@pytest.fixture
def http(server: DevServer) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=server.base_url, timeout=60) as client:
        client.delete(f"{SIM}/faults")
        yield client
        client.delete(f"{SIM}/faults")


_FORMATS = {
    "ladbs": lambda d: f"{d[:5]}-{d[5:10]}-{d[10:15]}",
    "epicla": lambda d: f"CREB{d[:10]}",
    "aca:sandiego": lambda d: f"PMT-{d[:7]}",
}


def fresh_permit(http: httpx.Client, slug: str) -> str:
    """A new permit created in the simulator (the dev server is shared with other modules, so
    a listed permit may already be cached there)."""
    digits = str(random.randrange(10**14, 10**15))
    number = _FORMATS[slug](digits)
    created = http.put(f"{SIM}/permits/{slug}/{number}", json={})
    assert created.status_code == 201, created.text
    return str(created.json()["permit_number"])


def used(http: httpx.Client, key: str) -> int:
    return int(http.get("/api/v1/usage", headers={"X-API-Key": key}).json()["lookup"]["used"])


def sim_requests(http: httpx.Client, slug: str) -> int:
    return int(http.get(f"{SIM}/stats").json()["requests"].get(slug, 0))


def status(http: httpx.Client, number: str, key: str, **params: Any) -> httpx.Response:
    return http.get(f"/api/v1/permits/{number}/status", params=params, headers={"X-API-Key": key})


def test_live_then_cached_with_meter(
    accounts: dict[str, dict[str, str]], http: httpx.Client
) -> None:
    key = accounts["pro"]["live_key"]
    number = fresh_permit(http, "ladbs")
    before, portal_before = used(http, key), sim_requests(http, "ladbs")
    live = status(http, number, key)
    assert live.status_code == 200, live.text
    assert live.json()["source"] == "live_scrape"
    assert live.json()["jurisdiction"] == "ladbs"
    assert set(live.json()["data_freshness"]) >= {"age_seconds", "next_refresh_at"}
    one_fetch = sim_requests(http, "ladbs") - portal_before
    assert one_fetch >= 1
    cached = status(http, number, key)
    assert cached.json()["source"] == "cached"
    assert sim_requests(http, "ladbs") - portal_before == one_fetch
    assert used(http, key) - before == 2
    assert cached.headers["X-RateLimit-Remaining"] == str(25_000 - used(http, key))


def test_fifty_concurrent_misses_make_one_fetch(
    accounts: dict[str, dict[str, str]],
    http: httpx.Client,
) -> None:
    key = accounts["enterprise"]["live_key"]
    # Requests one portal fetch of a LADBS permit makes (the adapter may read several pages).
    probe = fresh_permit(http, "ladbs")
    start = sim_requests(http, "ladbs")
    assert status(http, probe, key).status_code == 200
    per_fetch = sim_requests(http, "ladbs") - start

    number = fresh_permit(http, "ladbs")
    http.post(f"{SIM}/faults", json={"source": "ladbs", "mode": "slow", "latency_ms": 500})
    start = sim_requests(http, "ladbs")
    with ThreadPoolExecutor(max_workers=50) as pool:
        answers = list(pool.map(lambda _: status(http, number, key).status_code, range(50)))
    assert answers == [200] * 50
    assert sim_requests(http, "ladbs") - start == per_fetch


def test_portal_down_with_and_without_cache(
    accounts: dict[str, dict[str, str]],
    http: httpx.Client,
) -> None:
    key = accounts["pro"]["live_key"]
    cached_number, uncached_number = fresh_permit(http, "ladbs"), fresh_permit(http, "ladbs")
    assert status(http, cached_number, key).status_code == 200
    http.post(f"{SIM}/faults", json={"source": "ladbs", "mode": "down"})
    before = used(http, key)
    stale = status(http, cached_number, key, force_refresh="true")
    assert stale.status_code == 200, stale.text
    assert stale.json()["source"] == "stale_cache"
    assert stale.json()["data_freshness"]["is_stale"] is True
    assert stale.json()["data_freshness"]["stale_reason"].startswith("source_")
    assert used(http, key) - before == 10
    down = status(http, uncached_number, key)
    assert down.status_code == 503
    assert down.json()["code"] == "jurisdiction_unavailable"
    assert int(down.headers["Retry-After"]) > 0
    assert used(http, key) - before == 10  # the 503 gave its credit back


def test_missing_permit_and_unsupported_numbers(
    accounts: dict[str, dict[str, str]],
    http: httpx.Client,
) -> None:
    key = accounts["pro"]["live_key"]
    # EPIC-LA: the outage test above may have left LADBS's circuit breaker open.
    number = fresh_permit(http, "epicla")
    assert http.delete(f"{SIM}/permits/epicla/{number}").status_code < 300
    before = used(http, key)
    missing = status(http, number, key)
    assert missing.status_code == 404, missing.text
    assert missing.json()["code"] == "permit_not_found"
    unsupported = status(http, "not-a-permit", key)
    assert unsupported.json()["code"] == "jurisdiction_not_supported"
    assert used(http, key) - before == 2


def test_browser_backed_lookup_becomes_an_operation(
    accounts: dict[str, dict[str, str]],
    http: httpx.Client,
) -> None:
    owner = accounts["free"]["live_key"]
    number = fresh_permit(http, "aca:sandiego")
    before = used(http, owner)
    accepted = status(http, number, owner, jurisdiction="aca:sandiego")
    assert accepted.status_code == 202, accepted.text
    assert accepted.headers["Retry-After"] == "2"
    assert "Preference-Applied" not in accepted.headers
    location = accepted.headers["Location"]
    other = accounts["pro"]["live_key"]
    assert http.get(location, headers={"X-API-Key": other}).status_code == 404
    deadline = time.monotonic() + 60
    while True:
        polled = http.get(location, headers={"X-API-Key": owner}).json()
        if polled["status"] in ("succeeded", "failed"):
            break
        assert time.monotonic() < deadline, polled
        time.sleep(0.5)
    assert polled["status"] == "succeeded", polled
    assert polled["result"]["jurisdiction"] == "aca:sandiego"
    assert polled["result"]["source"] == "live_scrape"
    assert used(http, owner) - before == 1
    remembered = status(http, number, owner)
    assert remembered.status_code == 200
    assert remembered.json()["source"] == "cached"


def test_sandbox_and_batch(accounts: dict[str, dict[str, str]], http: httpx.Client) -> None:
    sandbox = accounts["free"]["sandbox_key"]
    demo = status(http, "21030-20000-00256", sandbox)
    assert demo.status_code == 200
    assert demo.headers["X-Sandbox-Mode"] == "true"
    key = accounts["pro"]["live_key"]
    numbers = [fresh_permit(http, "epicla"), fresh_permit(http, "epicla"), "nope"]
    before = used(http, key)
    batch = http.post(
        "/api/v1/permits/batch-status", json={"permit_numbers": numbers}, headers={"X-API-Key": key}
    )
    assert batch.status_code == 200
    body = batch.json()
    assert [r["source"] for r in body["results"]] == ["live_scrape", "live_scrape"]
    assert [e["error"] for e in body["errors"]] == ["jurisdiction_not_supported"]
    assert used(http, key) - before == 3


def test_key_deactivated_by_the_cli_stops_cached_lookups_at_once(
    server: DevServer, http: httpx.Client
) -> None:
    created = server.cli("keys", "create", "--plan", "developer", "--json")
    assert created.returncode == 0, created.stderr
    key = json.loads(created.stdout)["live_key"]
    # EPIC-LA: the outage test above may have left LADBS's circuit breaker open.
    number = fresh_permit(http, "epicla")
    looked_up = status(http, number, key)
    assert looked_up.status_code == 200, looked_up.text  # the server now caches this key
    deactivated = server.cli("keys", "deactivate", key)
    assert deactivated.returncode == 0, deactivated.stderr
    refused = status(http, number, key)
    assert refused.status_code == 401
    assert refused.json()["code"] == "invalid_api_key"
    batch = http.post(
        "/api/v1/permits/batch-status",
        json={"permit_numbers": [number]},
        headers={"X-API-Key": key},
    )
    assert batch.status_code == 401
