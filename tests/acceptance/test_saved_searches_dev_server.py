"""Black-box acceptance of saved searches and the permit_created monitor: a real `permitapi dev`
server and its simulator, `permitapi jobs run saved-searches|permit-created` run as an operator
would, and a real receiver verifying every delivery with `standardwebhooks`. EPIC-LA is the
source (earlier modules' outage tests may leave LADBS's circuit breaker open)."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from standardwebhooks import Webhook as Verifier

from tests.acceptance.test_lookups_dev_server import SIM, fresh_permit
from tests.support.cli import run_cli
from tests.support.dev_server import DevServer
from tests.support.receiver import Receiver, running_receiver

pytestmark = pytest.mark.slow
COUNTY = {"county": "Los Angeles County"}


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    with running_receiver() as running:
        yield running


# The pass with EPIC-LA down retries every read (jittered backoff from 0.5 s: ~2 s of sleep in
# all): the same attempts with millisecond pauses prove the same (an error, nothing emitted).
QUICK_RETRIES = json.dumps({"epicla": {"backoff_base_seconds": 0.005}})


def run_pass(server: DevServer, name: str) -> str:
    env = {
        **server.env,
        "PERMITAPI_PORTAL_BASE_URL": f"{server.base_url}/_sim",
        "PERMITAPI_SOURCE_POLICIES": QUICK_RETRIES,
    }
    done = run_cli("jobs", "run", name, cwd=server.workdir, env=env)
    assert done.returncode == 0, done.stderr
    return done.stdout


def events(http: httpx.Client, key: str, kind: str) -> list[dict[str, Any]]:
    found = http.get("/api/v1/events", params={"limit": 200}, headers={"X-API-Key": key})
    return [e for e in found.json()["events"] if e["event"] == kind]


def wait_for_delivery(receiver: Receiver, secret: str, kind: str, number: str) -> dict[str, Any]:
    deadline = time.monotonic() + 15
    while True:
        for item in receiver.on("/hook"):
            payload = Verifier(secret).verify(item.body, item.headers)
            if payload["event"] == kind and payload["permit_number"] == number:
                return payload
        assert time.monotonic() < deadline, f"no {kind} delivery for {number}"
        time.sleep(0.2)


def test_saved_search_baseline_then_one_match_per_new_permit(
    http: httpx.Client, server: DevServer, receiver: Receiver
) -> None:
    created = server.cli("keys", "create", "--plan", "pro", "--discovery-addon", "--json")
    key = json.loads(created.stdout)["live_key"]
    auth = {"X-API-Key": key}
    hook = http.post(
        "/api/v1/webhooks",
        json={"url": receiver.url(), "events": ["criteria_match"]},
        headers=auth,
    ).json()
    saved = http.post(
        "/api/v1/saved-searches", json={"name": "County permits", "criteria": COUNTY}, headers=auth
    )
    assert saved.status_code == 201, saved.text
    search_id = saved.json()["saved_search_id"]
    used_before = http.get("/api/v1/usage", headers=auth).json()

    run_pass(server, "saved-searches")  # the silent baseline
    state = http.get(f"/api/v1/saved-searches/{search_id}", headers=auth).json()
    assert state["evaluation"]["baseline_size"] > 0, state
    assert events(http, key, "criteria_match") == []

    new = fresh_permit(http, "epicla")
    run_pass(server, "saved-searches")
    matches = events(http, key, "criteria_match")
    assert [m["permit_number"] for m in matches] == [new]
    assert matches[0]["data"]["saved_search_id"] == search_id
    assert matches[0]["data"]["match"]["permit_number"] == new
    delivered = wait_for_delivery(receiver, hook["secret"], "criteria_match", new)
    assert delivered["event_id"] == matches[0]["event_id"]

    # A source that is down: the evaluation records the error and emits nothing.
    http.post(f"{SIM}/faults", json={"source": "epicla", "mode": "down"})
    hidden = fresh_permit(http, "epicla")
    run_pass(server, "saved-searches")
    http.delete(f"{SIM}/faults")
    state = http.get(f"/api/v1/saved-searches/{search_id}", headers=auth).json()
    assert state["evaluation"]["last_error"] is not None, state
    assert len(events(http, key, "criteria_match")) == 1
    # Back up: the permit first seen now is announced, once.
    run_pass(server, "saved-searches")
    assert [m["permit_number"] for m in events(http, key, "criteria_match")] == [new, hidden]
    run_pass(server, "saved-searches")
    assert len(events(http, key, "criteria_match")) == 2
    used_after = http.get("/api/v1/usage", headers=auth).json()
    assert used_after["lookup"]["used"] == used_before["lookup"]["used"]
    assert used_after["discovery"]["used"] == used_before["discovery"]["used"]


def test_permit_created_reaches_only_subscribed_entitled_keys(
    http: httpx.Client, server: DevServer, receiver: Receiver
) -> None:
    subscribed = json.loads(
        server.cli("keys", "create", "--plan", "pro", "--discovery-addon", "--json").stdout
    )["live_key"]
    no_addon = json.loads(server.cli("keys", "create", "--plan", "pro", "--json").stdout)[
        "live_key"
    ]
    hook = http.post(
        "/api/v1/webhooks",
        json={"url": receiver.url(), "events": ["permit_created"]},
        headers={"X-API-Key": subscribed},
    ).json()
    http.post(
        "/api/v1/webhooks",
        json={"url": receiver.url("/other"), "events": ["permit_created"]},
        headers={"X-API-Key": no_addon},
    )
    run_pass(server, "permit-created")  # the baseline, or a pass after the startup baseline
    new = fresh_permit(http, "epicla")
    run_pass(server, "permit-created")
    created = [e for e in events(http, subscribed, "permit_created") if e["permit_number"] == new]
    assert len(created) == 1
    assert created[0]["data"]["permit"]["permit_number"] == new
    wait_for_delivery(receiver, hook["secret"], "permit_created", new)
    assert events(http, no_addon, "permit_created") == []
    run_pass(server, "permit-created")
    again = [e for e in events(http, subscribed, "permit_created") if e["permit_number"] == new]
    assert len(again) == 1
