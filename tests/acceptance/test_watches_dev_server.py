"""Black-box acceptance of watches: a real `permitapi dev` server and its simulator, a real
receiver verifying signatures with `standardwebhooks`, and `permitapi jobs run watch-check`
run as an operator would (with the dev server's settings)."""

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
from tests.support.problems import assert_problem
from tests.support.receiver import Receiver, running_receiver

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def keys(server: DevServer) -> dict[str, dict[str, str]]:
    made = {}
    for plan in ("free", "pro"):
        created = server.cli("keys", "create", "--plan", plan, "--json")
        assert created.returncode == 0, created.stderr
        made[plan] = json.loads(created.stdout)
    return made


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    with running_receiver() as running:
        yield running


def check_now(server: DevServer) -> str:
    env = {**server.env, "PERMITAPI_PORTAL_BASE_URL": f"{server.base_url}/_sim"}
    done = run_cli("jobs", "run", "watch-check", cwd=server.workdir, env=env)
    assert done.returncode == 0, done.stderr
    return done.stdout


def events_of(http: httpx.Client, key: str, permit: str) -> list[dict[str, Any]]:
    found = http.get("/api/v1/events", params={"limit": 200}, headers={"X-API-Key": key})
    return [e for e in found.json()["events"] if e["permit_number"] == permit]


def test_a_watched_permit_change_reaches_feed_and_receiver(
    http: httpx.Client, server: DevServer, keys: dict[str, dict[str, str]], receiver: Receiver
) -> None:
    key = keys["pro"]["live_key"]
    auth = {"X-API-Key": key}
    # EPIC-LA: earlier modules' outage tests may leave LADBS's circuit breaker open.
    watched, unwatched = fresh_permit(http, "epicla"), fresh_permit(http, "epicla")
    hook = http.post(
        "/api/v1/webhooks",
        json={
            "url": receiver.url(),
            "events": ["status_change", "permit_approved", "permit_denied"],
        },
        headers=auth,
    ).json()
    enrolled = http.post(f"/api/v1/permits/{watched}/watch", headers=auth)
    assert enrolled.status_code == 201, enrolled.text
    assert "warning" not in enrolled.json()
    assert http.get(f"/api/v1/permits/{unwatched}/status", headers=auth).status_code == 200
    for number in (watched, unwatched):
        changed = http.put(f"{SIM}/permits/epicla/{number}", json={"status": "Finaled"})
        assert changed.status_code == 200, changed.text
    summary = check_now(server)
    assert "watch-check:" in summary
    received = receiver.wait_for("/hook", 2)
    payloads = [Verifier(hook["secret"]).verify(r.body, r.headers) for r in received]
    assert sorted(p["event"] for p in payloads) == ["permit_approved", "status_change"]
    assert {p["permit_number"] for p in payloads} == {watched}
    change = next(p for p in payloads if p["event"] == "status_change")
    assert change["data"]["old_portal_status"] == "Issued"
    assert change["data"]["new_portal_status"] == "Finaled"
    assert [e["event"] for e in events_of(http, key, watched)] == [
        "status_change",
        "permit_approved",
    ]
    assert events_of(http, key, unwatched) == []
    # Nothing changed since: another check emits nothing.
    check_now(server)
    assert len(events_of(http, key, watched)) == 2

    # A terminal status completes the watch after its final events.
    http.put(f"{SIM}/permits/epicla/{watched}", json={"status": "Expired"})
    check_now(server)
    assert [e["event"] for e in events_of(http, key, watched)][2:] == [
        "status_change",
        "permit_denied",
    ]
    listed = http.get("/api/v1/permits/watches", headers=auth).json()
    assert watched not in {w["permit_number"] for w in listed["watches"]}
    deadline = time.monotonic() + 10
    while len(receiver.on("/hook")) < 4:
        assert time.monotonic() < deadline
        time.sleep(0.1)
    assert http.delete(f"/api/v1/webhooks/{hook['webhook_id']}", headers=auth).status_code == 200


def test_watch_entitlements_and_caps(http: httpx.Client, keys: dict[str, dict[str, str]]) -> None:
    free = {"X-API-Key": keys["free"]["live_key"]}
    sandbox = {"X-API-Key": keys["free"]["sandbox_key"]}
    first, second = fresh_permit(http, "epicla"), fresh_permit(http, "epicla")
    assert http.post(f"/api/v1/permits/{first}/watch", headers=free).status_code == 201
    assert http.post(f"/api/v1/permits/{first}/watch", headers=free).status_code == 200
    capped = assert_problem(
        http.post(f"/api/v1/permits/{second}/watch", headers=free), 400, "watch_limit_reached"
    )
    assert capped["plan_limit"] == 1
    assert_problem(
        http.post(f"/api/v1/permits/{first}/watch", headers=sandbox), 403, "sandbox_not_supported"
    )
    assert_problem(
        http.post("/api/v1/permits/not-a-permit/watch", headers=free),
        404,
        "jurisdiction_not_supported",
    )
    listed = http.get("/api/v1/permits/watches", headers=free).json()
    assert listed["total"] == 1
    assert listed["remaining"] == 0
    removed = http.delete(f"/api/v1/permits/{first}/watch", headers=free)
    assert removed.json() == {"status": "unwatched", "permit_number": first}
    assert http.post(f"/api/v1/permits/{second}/watch", headers=free).status_code == 201
