"""POST test and simulate (one signed request, answered inline) and the events feed."""

from __future__ import annotations

import socket
from datetime import timedelta
from typing import Any

import httpx
import pytest
from standardwebhooks import Webhook as Verifier

from permitapi.context import AppContext
from permitapi.event import service as events
from permitapi.event.service import EVENT_TYPES
from permitapi.kit.clock import FrozenClock
from tests.support.problems import assert_problem
from tests.support.receiver import Answer, Receiver
from tests.webhook.conftest import Key, new_key, register
from tests.webhook.test_delivery import deliveries, emit


def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
    return port


async def test_test_sends_a_signed_synthetic_event_and_counts_nothing(
    client: httpx.AsyncClient, ctx: AppContext, receiver: Receiver
) -> None:
    key = await new_key(ctx)
    hook = await register(client, key, receiver.url(), ["status_change"])
    path = f"/api/v1/webhooks/{hook['webhook_id']}/test"
    answered = await client.post(path, headers=key.headers)
    assert answered.status_code == 200, answered.text
    assert answered.json() == {"success": True, "status_code": 200, "error": None}
    [got] = receiver.on("/hook")
    payload = Verifier(str(hook["secret"])).verify(got.body, got.headers)
    assert payload["event"] == "test"
    assert got.headers["x-service-event"] == "test"
    receiver.answer("/hook", Answer(status=500))
    failed = (await client.post(path, headers=key.headers)).json()
    assert failed == {"success": False, "status_code": 500, "error": "HTTP 500"}
    patched = await client.patch(
        f"/api/v1/webhooks/{hook['webhook_id']}",
        json={"url": f"http://127.0.0.1:{closed_port()}/hook"},
        headers=key.headers,
    )
    assert patched.status_code == 200, patched.text
    unreachable = (await client.post(path, headers=key.headers)).json()
    assert unreachable["success"] is False
    assert unreachable["status_code"] is None
    assert unreachable["error"]
    listed = (await client.get("/api/v1/webhooks", headers=key.headers)).json()["webhooks"][0]
    assert listed["consecutive_failures"] == 0
    assert listed["is_active"] is True
    assert await deliveries(client, key, hook["webhook_id"]) == []


@pytest.mark.parametrize("event", EVENT_TYPES)
async def test_simulate_sends_a_live_shaped_delivery_of_every_event(
    client: httpx.AsyncClient, ctx: AppContext, receiver: Receiver, event: str
) -> None:
    key = await new_key(ctx)
    hook = await register(
        client, key, receiver.url(), [event], jurisdiction_filter=["aca:sandiego"]
    )
    answered = await client.post(
        f"/api/v1/webhooks/{hook['webhook_id']}/simulate",
        json={"event": event},
        headers=key.headers,
    )
    assert answered.status_code == 200, answered.text
    assert answered.json() == {
        "ok": True,
        "delivery": {"status_code": 200, "body_preview": '{"ok": true}', "error": None},
    }
    [got] = receiver.on("/hook")
    assert got.headers["x-service-test"] == "true"
    assert got.headers["x-service-event"] == event
    payload = Verifier(str(hook["secret"])).verify(got.body, got.headers)
    assert payload.keys() == {
        "event_id",
        "delivery_id",
        "event",
        "permit_number",
        "jurisdiction",
        "jurisdiction_display",
        "data",
        "timestamp",
    }
    assert payload["event"] == event
    assert payload["jurisdiction"] == "aca:sandiego"
    assert payload["data"]
    if event == "status_change":
        assert payload["data"].keys() == {
            "old_status",
            "new_status",
            "old_portal_status",
            "new_portal_status",
            "changed_at",
        }


async def test_simulate_defaults_and_reports_transport_failures(
    client: httpx.AsyncClient, ctx: AppContext, receiver: Receiver
) -> None:
    key = await new_key(ctx)
    hook = await register(client, key, receiver.url(), ["status_change"])
    path = f"/api/v1/webhooks/{hook['webhook_id']}/simulate"
    assert (await client.post(path, headers=key.headers)).json()["ok"] is True
    assert receiver.on("/hook")[0].headers["x-service-event"] == "status_change"
    assert_problem(
        await client.post(path, json={"event": "nope"}, headers=key.headers), 400, "invalid_body"
    )
    await client.patch(
        f"/api/v1/webhooks/{hook['webhook_id']}",
        json={"url": f"http://127.0.0.1:{closed_port()}/x"},
        headers=key.headers,
    )
    failed = (await client.post(path, headers=key.headers)).json()
    assert failed["ok"] is True
    assert failed["delivery"]["status_code"] == 0
    assert failed["delivery"]["error"]


async def feed(
    client: httpx.AsyncClient, key: Key, **params: Any
) -> tuple[list[dict[str, Any]], str | None, bool]:
    response = await client.get("/api/v1/events", params=params, headers=key.headers)
    assert response.status_code == 200, response.text
    body = response.json()
    return body["events"], body["next_cursor"], body["has_more"]


async def test_the_feed_pages_a_keys_events_oldest_first(
    client: httpx.AsyncClient, ctx: AppContext, clock: FrozenClock
) -> None:
    key, other = await new_key(ctx), await new_key(ctx)
    assert await feed(client, key) == ([], None, False)
    ids = []
    for index in range(5):
        ids.append(await emit(ctx, key, data={"n": index}))
        clock.advance(timedelta(seconds=1))
    await emit(ctx, other)
    first, cursor, more = await feed(client, key, limit=2)
    assert [e["event_id"] for e in first] == ids[:2]
    assert more is True
    entry = first[0]
    assert entry.keys() == {
        "event_id",
        "event",
        "permit_number",
        "jurisdiction",
        "jurisdiction_display",
        "data",
        "occurred_at",
        "created_at",
    }
    assert entry["event"] == "status_change"
    assert entry["data"] == {"n": 0}
    rest, cursor2, more2 = await feed(client, key, limit=10, cursor=cursor)
    assert [e["event_id"] for e in rest] == ids[2:]
    assert more2 is False
    # An empty poll answers the checkpoint it was given.
    assert await feed(client, key, cursor=cursor2) == ([], cursor2, False)
    new = await emit(ctx, key)
    assert [e["event_id"] for e in (await feed(client, key, cursor=cursor2))[0]] == [new]
    # The other key sees only its own event, and cannot use this key's cursor.
    theirs, _, _ = await feed(client, other)
    assert len(theirs) == 1
    problem = assert_problem(
        await client.get("/api/v1/events", params={"cursor": cursor2}, headers=other.headers),
        400,
        "invalid_cursor",
    )
    assert problem["parameter"] == "cursor"
    assert cursor2 is not None
    tampered = cursor2[:-3] + ("AAA" if not cursor2.endswith("AAA") else "BBB")
    assert_problem(
        await client.get("/api/v1/events", params={"cursor": tampered}, headers=key.headers),
        400,
        "invalid_cursor",
    )
    # Digits only: pydantic alone reads `1_0`, `10.0` and `+10` as 10.
    for limit in (0, 201, "x", "1_0", "10.0", "+10", " 10", "\uff11\uff10"):
        assert_problem(
            await client.get("/api/v1/events", params={"limit": limit}, headers=key.headers),
            400,
            "invalid_parameter",
        )
    # 30 days on, the checkpoint's event has expired; without a cursor the feed restarts at
    # the oldest retained event.
    clock.advance(timedelta(days=30, seconds=1))
    assert_problem(
        await client.get("/api/v1/events", params={"cursor": cursor2}, headers=key.headers),
        400,
        "invalid_cursor",
    )
    assert await feed(client, key) == ([], None, False)


async def test_operation_completed_reaches_only_the_operations_owner(
    client: httpx.AsyncClient, ctx: AppContext
) -> None:
    owner, other = await new_key(ctx), await new_key(ctx)
    async with ctx.transaction() as session:
        await events.emit(
            session,
            "operation_completed",
            data={"operation_id": "x"},
            occurred_at=ctx.clock.now(),
            recipients=[owner.api_key_id],
            api_key_id=owner.api_key_id,
        )
    assert [e["event"] for e in (await feed(client, owner))[0]] == ["operation_completed"]
    assert (await feed(client, other))[0] == []
