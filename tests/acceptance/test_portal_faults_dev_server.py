"""A portal that hangs, resets connections or serves garbage, against a real `permitapi dev`
server: cached permits are answered stale (never a 5xx from us, never an empty 200), uncached
ones get a quick 503 with Retry-After, the circuit opens, /developers/status.json says so, and
the service recovers by itself once the portal does.

The server runs with a 1 s read timeout and a 2 s circuit cooldown, so a hang costs about a
second per attempt and recovery is observable within the test.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator

import httpx
import pytest

from tests.acceptance.test_lookups_dev_server import SIM, fresh_permit, status
from tests.support.dev_server import DevServer, dev_server

pytestmark = pytest.mark.slow

SOURCE = "ladbs"
READ_TIMEOUT_SECONDS = 1.0
# Long enough that the checks made while the circuit is open end before it half-opens, even
# on a loaded machine (2 s let a trial request through in a run with every core busy).
COOLDOWN_SECONDS = 5.0


@pytest.fixture(scope="module", params=["sqlite", "postgresql"])
def faulty_server(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[DevServer]:
    policies = {SOURCE: {"circuit_cooldown_seconds": COOLDOWN_SECONDS, "max_attempts": 2}}
    overrides = {
        "PERMITAPI_SOURCE_READ_TIMEOUT_SECONDS": str(READ_TIMEOUT_SECONDS),
        "PERMITAPI_SOURCE_POLICIES": json.dumps(policies),
    }
    workdir = tmp_path_factory.mktemp("faults")
    with dev_server(request.param, workdir, "--latency-ms", "0", env_overrides=overrides) as up:
        yield up


@pytest.fixture
def client(faulty_server: DevServer) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=faulty_server.base_url, timeout=30) as http:
        yield http
        http.delete(f"{SIM}/faults")


def source_health(http: httpx.Client) -> dict[str, object]:
    listed = http.get("/developers/status.json").json()["jurisdictions"]
    found: dict[str, object] = next(j for j in listed if j["slug"] == SOURCE)
    return found


@pytest.mark.parametrize("mode", ["garbage", "reset", "timeout"])
def test_a_misbehaving_portal_gets_stale_answers_and_quick_refusals(
    faulty_server: DevServer, client: httpx.Client, mode: str
) -> None:
    key = faulty_server.keys["pro"]["live_key"]
    cached, uncached = fresh_permit(client, SOURCE), fresh_permit(client, SOURCE)
    assert status(client, cached, key).json()["source"] == "live_scrape"
    fault = {"source": SOURCE, "mode": mode, "latency_ms": 5_000}
    assert client.post(f"{SIM}/faults", json=fault).status_code < 300

    began = time.monotonic()
    stale = status(client, cached, key, force_refresh="true")
    assert stale.status_code == 200, stale.text
    assert stale.json()["source"] == "stale_cache"
    freshness = stale.json()["data_freshness"]
    assert freshness["is_stale"] is True
    assert freshness["stale_reason"]
    refused = status(client, uncached, key)
    assert refused.status_code == 503, refused.text
    assert refused.json()["code"] == "jurisdiction_unavailable"
    assert int(refused.headers["Retry-After"]) > 0
    # Two reads at two attempts each, a hang costing the 1 s read timeout per attempt.
    assert time.monotonic() - began < 4 * READ_TIMEOUT_SECONDS + 3

    for _ in range(6):
        assert status(client, fresh_permit(client, SOURCE), key).status_code == 503
    health = source_health(client)
    assert health["status"] in {"degraded", "down"}, health
    if mode == "garbage":
        # The portal answers, promptly, with something we cannot read: a parse failure
        # (portal_changed) says nothing about availability, so the breaker stays closed.
        assert health["circuit_state"] == "closed", health
    else:
        # Repeated transport failures open the breaker: no request reaches the portal.
        assert health["circuit_state"] == "open", health
        before = client.get(f"{SIM}/stats").json()["requests"].get(SOURCE, 0)
        assert status(client, fresh_permit(client, SOURCE), key).status_code == 503
        assert client.get(f"{SIM}/stats").json()["requests"].get(SOURCE, 0) == before

    # The portal recovers; after the cooldown a trial request closes the circuit again.
    client.delete(f"{SIM}/faults")
    time.sleep(COOLDOWN_SECONDS + 0.5)
    recovered = status(client, fresh_permit(client, SOURCE), key)
    assert recovered.status_code == 200, recovered.text
    assert recovered.json()["source"] == "live_scrape"
    assert source_health(client)["circuit_state"] == "closed"
