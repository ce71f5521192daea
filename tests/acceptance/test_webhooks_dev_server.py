"""Black-box acceptance of webhooks and the events feed: a real `permitapi dev` server (its
in-process worker delivers) and a real receiver on loopback, every delivery verified with the
official `standardwebhooks` library. The events come from real operations: a browser-backed
lookup becomes an operation whose completion emits `operation_completed`."""

from __future__ import annotations

import hashlib
import hmac
import json
import time
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

import httpx
import pytest
from standardwebhooks import Webhook as Verifier

from tests.acceptance.test_lookups_dev_server import fresh_permit, status
from tests.support.dev_server import DevServer
from tests.support.problems import assert_problem
from tests.support.receiver import Answer, Receiver, running_receiver

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def keys(server: DevServer) -> dict[str, str]:
    made = {}
    for plan in ("free", "pro"):
        created = server.cli("keys", "create", "--plan", plan, "--json")
        assert created.returncode == 0, created.stderr
        made[plan] = json.loads(created.stdout)["live_key"]
    return made


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    with running_receiver() as running:
        yield running


def headers(key: str) -> dict[str, str]:
    return {"X-API-Key": key}


def register(http: httpx.Client, key: str, url: str, events: list[str]) -> dict[str, Any]:
    created = http.post(
        "/api/v1/webhooks", json={"url": url, "events": events}, headers=headers(key)
    )
    assert created.status_code == 201, created.text
    body: dict[str, Any] = created.json()
    return body


def complete_an_operation(http: httpx.Client, key: str) -> str:
    """A browser-backed lookup (San Diego) is accepted as an operation; returns its id once
    the dev server's worker has completed it."""
    number = fresh_permit(http, "aca:sandiego")
    accepted = status(http, number, key, jurisdiction="aca:sandiego")
    assert accepted.status_code == 202, accepted.text
    location = accepted.headers["Location"]
    deadline = time.monotonic() + 60
    while http.get(location, headers=headers(key)).json()["status"] not in ("succeeded", "failed"):
        assert time.monotonic() < deadline
        time.sleep(0.2)
    return location.rsplit("/", 1)[-1]


def deliveries_of(http: httpx.Client, key: str, webhook_id: str) -> list[dict[str, Any]]:
    listed = http.get(f"/api/v1/webhooks/{webhook_id}/deliveries", headers=headers(key))
    assert listed.status_code == 200, listed.text
    found: list[dict[str, Any]] = listed.json()["deliveries"]
    return found


def wait_for_status(
    http: httpx.Client, key: str, webhook_id: str, wanted: str, timeout: float = 20
) -> dict[str, Any]:
    deadline = time.monotonic() + timeout
    while True:
        found = deliveries_of(http, key, webhook_id)
        if found and found[0]["attempts"] >= 1 and found[0]["status"] == wanted:
            return found[0]
        assert time.monotonic() < deadline, found
        time.sleep(0.2)


def test_operation_completed_is_delivered_signed_and_in_the_feed(
    http: httpx.Client, keys: dict[str, str], receiver: Receiver
) -> None:
    key = keys["pro"]
    hook = register(http, key, receiver.url(), ["operation_completed"])
    operation_id = complete_an_operation(http, key)
    [got] = receiver.wait_for("/hook", 1)
    payload = Verifier(hook["secret"]).verify(got.body, got.headers)
    assert payload["event"] == "operation_completed"
    assert payload["data"]["operation_id"] == operation_id
    assert payload["data"]["status"] == "succeeded"
    assert payload["data"]["poll_url"] == f"/api/v1/operations/{operation_id}"
    legacy = hmac.new(hook["secret"].encode(), got.body, hashlib.sha256).hexdigest()
    assert got.headers["x-service-signature"] == legacy
    assert got.headers["x-service-event"] == "operation_completed"
    delivered = wait_for_status(http, key, hook["webhook_id"], "delivered")
    assert delivered["id"] == got.headers["webhook-id"] == payload["delivery_id"]
    assert delivered["payload"].encode() == got.body
    events = http.get("/api/v1/events", headers=headers(key)).json()["events"]
    mine = [e for e in events if e["event_id"] == payload["event_id"]]
    assert len(mine) == 1
    assert mine[0]["data"] == payload["data"]
    # Another key sees none of it.
    other = keys["free"]
    assert_problem(
        http.get(f"/api/v1/webhooks/{hook['webhook_id']}/deliveries", headers=headers(other)),
        404,
        "webhook_not_found",
    )
    theirs = http.get("/api/v1/events", headers=headers(other)).json()["events"]
    assert payload["event_id"] not in {e["event_id"] for e in theirs}


def test_both_secrets_sign_during_a_rotation(
    http: httpx.Client, keys: dict[str, str], receiver: Receiver
) -> None:
    key = keys["pro"]
    hook = register(http, key, receiver.url("/rotating"), ["operation_completed"])
    rotated = http.post(
        f"/api/v1/webhooks/{hook['webhook_id']}/rotate-secret", headers=headers(key)
    )
    assert rotated.status_code == 200, rotated.text
    complete_an_operation(http, key)
    [got] = receiver.wait_for("/rotating", 1)
    assert len(got.headers["webhook-signature"].split(" ")) == 2
    old = Verifier(hook["secret"]).verify(got.body, got.headers)
    new = Verifier(rotated.json()["secret"]).verify(got.body, got.headers)
    assert old == new
    overlap_end = datetime.fromisoformat(rotated.json()["previous_secret_valid_until"])
    assert 23.9 * 3600 < (overlap_end - datetime.now(UTC)).total_seconds() <= 24 * 3600


def test_failing_receivers_get_exactly_the_specified_behaviour(
    http: httpx.Client, keys: dict[str, str], receiver: Receiver
) -> None:
    key = keys["pro"]
    receiver.answer("/busy", Answer(status=503, headers={"Retry-After": "3600"}))
    receiver.answer("/moved", Answer(status=302, headers={"Location": receiver.url("/target")}))
    receiver.answer("/gone", Answer(status=410))
    busy = register(http, key, receiver.url("/busy"), ["operation_completed"])
    moved = register(http, key, receiver.url("/moved"), ["operation_completed"])
    gone = register(http, key, receiver.url("/gone"), ["operation_completed"])
    complete_an_operation(http, key)
    receiver.wait_for("/busy", 1)
    receiver.wait_for("/moved", 1)
    receiver.wait_for("/gone", 1)

    waiting = wait_for_status(http, key, busy["webhook_id"], "pending")
    assert waiting["last_status_code"] == 503
    due = datetime.fromisoformat(waiting["next_attempt_at"])
    assert (due - datetime.now(UTC)).total_seconds() > 3500  # Retry-After moved it an hour on

    redirected = wait_for_status(http, key, moved["webhook_id"], "pending")
    assert redirected["last_status_code"] == 302
    assert "redirect" in redirected["last_error"]
    assert receiver.on("/target") == []

    dead = wait_for_status(http, key, gone["webhook_id"], "dead")
    assert dead["last_status_code"] == 410
    listed = {
        w["webhook_id"]: w
        for w in http.get("/api/v1/webhooks", headers=headers(key)).json()["webhooks"]
    }
    assert listed[gone["webhook_id"]]["is_active"] is False
    assert listed[gone["webhook_id"]]["disabled_reason"] == "gone"
    assert listed[busy["webhook_id"]]["consecutive_failures"] == 1
    for hook in (busy, moved):  # leave the shared key's webhook cap free for other tests
        assert (
            http.delete(f"/api/v1/webhooks/{hook['webhook_id']}", headers=headers(key)).status_code
            == 200
        )


def test_test_simulate_and_replay_on_a_live_server(
    http: httpx.Client, keys: dict[str, str], receiver: Receiver
) -> None:
    key = keys["pro"]
    hook = register(http, key, receiver.url("/probe"), ["status_change", "operation_completed"])
    base = f"/api/v1/webhooks/{hook['webhook_id']}"
    assert http.post(f"{base}/test", headers=headers(key)).json() == {
        "success": True,
        "status_code": 200,
        "error": None,
    }
    simulated = http.post(
        f"{base}/simulate", json={"event": "permit_created"}, headers=headers(key)
    )
    assert simulated.json()["ok"] is True
    test_ping, simulation = receiver.wait_for("/probe", 2)
    assert Verifier(hook["secret"]).verify(test_ping.body, test_ping.headers)["event"] == "test"
    assert simulation.headers["x-service-test"] == "true"
    assert (
        Verifier(hook["secret"]).verify(simulation.body, simulation.headers)["event"]
        == "permit_created"
    )
    assert deliveries_of(http, key, hook["webhook_id"]) == []

    complete_an_operation(http, key)
    original = wait_for_status(http, key, hook["webhook_id"], "delivered")
    replayed = http.post(
        f"{base}/deliveries/{original['id']}/replay",
        headers={**headers(key), "Idempotency-Key": "again-1"},
    )
    assert replayed.status_code == 202, replayed.text
    live, replay = receiver.wait_for("/probe", 4)[2:]
    first, second = (
        Verifier(hook["secret"]).verify(live.body, live.headers),
        Verifier(hook["secret"]).verify(replay.body, replay.headers),
    )
    assert second["delivery_id"] == replayed.json()["delivery"]["id"] != first["delivery_id"]
    assert second["event_id"] == first["event_id"]
    assert second["timestamp"] == first["timestamp"]
    assert http.delete(base, headers=headers(key)).status_code == 200


@pytest.mark.parametrize(
    "url",
    [
        "https://10.1.2.3/h",
        "https://169.254.169.254/latest",
        "https://100.64.1.1/h",
        "https://0x7f000001/h",
        "https://017700000001/h",
        "https://127.1/h",
        "https://[::ffff:127.0.0.1]/h",
        "https://[64:ff9b::a00:1]/h",
        "https://[fe80::1]/h",
        "https://0.0.0.0/h",
        "https://224.0.0.1/h",
        "https://localhost/h",
        "http://93.184.216.34/h",
        "https://user:secret@93.184.216.34/h",
    ],
)
def test_unsafe_destinations_are_refused_at_registration_and_patch(
    http: httpx.Client, keys: dict[str, str], url: str, receiver: Receiver
) -> None:
    key = keys["pro"]
    refused = http.post(
        "/api/v1/webhooks", json={"url": url, "events": ["status_change"]}, headers=headers(key)
    )
    assert_problem(refused, 400, "invalid_webhook_url")
    hook = register(http, key, receiver.url("/patched"), ["status_change"])
    patched = http.patch(
        f"/api/v1/webhooks/{hook['webhook_id']}", json={"url": url}, headers=headers(key)
    )
    assert_problem(patched, 400, "invalid_webhook_url")
    assert (
        http.delete(f"/api/v1/webhooks/{hook['webhook_id']}", headers=headers(key)).status_code
        == 200
    )
