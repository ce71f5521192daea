"""The delivery engine against a real receiver on loopback: signing verified with the
`standardwebhooks` library, acknowledgement, retries with Retry-After, redirects, 410, dead
deliveries and automatic disabling, rotation overlap, replay, SSRF at delivery time, leases."""

from __future__ import annotations

import hashlib
import hmac
from datetime import timedelta
from typing import Any

import httpx
import orjson
from standardwebhooks import Webhook as Verifier

from permitapi.context import AppContext
from permitapi.event import service as events
from permitapi.kit.clock import FrozenClock
from permitapi.webhook import repository, schedule
from permitapi.webhook.jobs import DeliveryJobs
from tests.support.problems import assert_problem
from tests.support.receiver import Answer, Receiver
from tests.webhook.conftest import Key, new_key, register


async def emit(
    ctx: AppContext,
    key: Key,
    event: str = "status_change",
    *,
    jurisdiction: str | None = "ladbs",
    data: dict[str, Any] | None = None,
) -> str:
    async with ctx.transaction() as session:
        return await events.emit(
            session,
            event,
            data=data or {"old_status": "in_review", "new_status": "issued"},
            occurred_at=ctx.clock.now(),
            recipients=[key.api_key_id],
            permit_number="24010-10000-01234",
            jurisdiction=jurisdiction,
        )


async def deliveries(
    client: httpx.AsyncClient, key: Key, webhook_id: object
) -> list[dict[str, Any]]:
    response = await client.get(f"/api/v1/webhooks/{webhook_id}/deliveries", headers=key.headers)
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["webhook_id"] == webhook_id
    found: list[dict[str, Any]] = body["deliveries"]
    return found


def verify(secret: str, received: Any) -> dict[str, Any]:
    parsed = Verifier(secret).verify(received.body, received.headers)
    assert isinstance(parsed, dict)
    return parsed


async def test_an_event_is_delivered_signed_and_recorded(
    client: httpx.AsyncClient, ctx: AppContext, receiver: Receiver
) -> None:
    key = await new_key(ctx)
    hook = await register(client, key, receiver.url(), ["status_change"])
    event_id = await emit(ctx, key)
    [pending] = await deliveries(client, key, hook["webhook_id"])
    assert pending["status"] == "pending"
    assert pending["attempts"] == 0
    assert await DeliveryJobs().run_due(ctx) == 1
    [got] = receiver.on("/hook")
    payload = verify(str(hook["secret"]), got)
    assert payload["event_id"] == event_id
    assert payload["delivery_id"] == pending["id"] == got.headers["webhook-id"]
    assert payload["event"] == "status_change"
    assert payload["permit_number"] == "24010-10000-01234"
    assert payload["jurisdiction"] == "ladbs"
    assert payload["jurisdiction_display"]
    assert got.headers["x-service-event"] == "status_change"
    assert got.headers["content-type"] == "application/json"
    legacy = hmac.new(str(hook["secret"]).encode(), got.body, hashlib.sha256).hexdigest()
    assert got.headers["x-service-signature"] == legacy
    [done] = await deliveries(client, key, hook["webhook_id"])
    assert done["status"] == "delivered"
    assert done["attempts"] == 1
    assert done["next_attempt_at"] is None
    assert done["payload"].encode() == got.body
    assert done["last_status_code"] == 200
    listed = (await client.get("/api/v1/webhooks", headers=key.headers)).json()["webhooks"][0]
    assert listed["last_triggered_at"] is not None
    assert await DeliveryJobs().run_due(ctx) == 0


async def test_only_matching_active_webhooks_of_the_recipients_get_a_delivery(
    client: httpx.AsyncClient, ctx: AppContext, receiver: Receiver
) -> None:
    key, stranger = await new_key(ctx), await new_key(ctx)
    await register(client, key, receiver.url("/all"), ["status_change", "permit_approved"])
    await register(
        client, key, receiver.url("/la"), ["status_change"], jurisdiction_filter=["ladbs"]
    )
    await register(
        client, key, receiver.url("/sd"), ["status_change"], jurisdiction_filter=["aca:sandiego"]
    )
    await register(client, key, receiver.url("/other"), ["permit_denied"])
    await register(client, stranger, receiver.url("/stranger"), ["status_change"])
    await emit(ctx, key, jurisdiction="ladbs")
    await emit(ctx, key, "permit_approved", jurisdiction="aca:sandiego")
    while await DeliveryJobs().run_due(ctx):
        pass
    assert len(receiver.on("/all")) == 2
    assert len(receiver.on("/la")) == 1
    assert receiver.on("/sd") == []
    assert receiver.on("/other") == []
    assert receiver.on("/stranger") == []


async def test_a_failure_is_retried_inside_its_window_and_retry_after_is_honoured(
    client: httpx.AsyncClient, ctx: AppContext, clock: FrozenClock, receiver: Receiver
) -> None:
    key = await new_key(ctx)
    hook = await register(client, key, receiver.url(), ["status_change"])
    receiver.answer("/hook", Answer(status=503, headers={"Retry-After": "600"}))
    await emit(ctx, key)
    created = clock.now()
    await DeliveryJobs().run_due(ctx)
    [first] = await deliveries(client, key, hook["webhook_id"])
    assert first["status"] == "pending"
    assert first["attempts"] == 1
    assert first["last_status_code"] == 503
    assert first["last_error"] == "HTTP 503"
    # The first retry window is 0-60 s, but Retry-After: 600 moves it later.
    due = _at(first["next_attempt_at"])
    assert due >= created + timedelta(seconds=600)
    clock.advance(timedelta(seconds=599))
    assert await DeliveryJobs().run_due(ctx) == 0
    receiver.answer("/hook", Answer(status=204, body=b""))
    clock.set(due)
    assert await DeliveryJobs().run_due(ctx) == 1
    [done] = await deliveries(client, key, hook["webhook_id"])
    assert done["status"] == "delivered"
    assert done["attempts"] == 2
    got = receiver.on("/hook")
    assert got[0].headers["webhook-id"] == got[1].headers["webhook-id"]
    assert got[0].body == got[1].body
    assert got[0].headers["webhook-timestamp"] != got[1].headers["webhook-timestamp"]
    listed = (await client.get("/api/v1/webhooks", headers=key.headers)).json()["webhooks"][0]
    assert listed["consecutive_failures"] == 0


def _at(text: str) -> Any:
    from datetime import datetime

    return datetime.fromisoformat(text.replace("Z", "+00:00"))


async def test_a_redirect_is_a_failure_and_is_not_followed(
    client: httpx.AsyncClient, ctx: AppContext, receiver: Receiver
) -> None:
    key = await new_key(ctx)
    hook = await register(client, key, receiver.url(), ["status_change"])
    receiver.answer("/hook", Answer(status=307, headers={"Location": receiver.url("/elsewhere")}))
    await emit(ctx, key)
    await DeliveryJobs().run_due(ctx)
    [failed] = await deliveries(client, key, hook["webhook_id"])
    assert failed["status"] == "pending"
    assert failed["last_status_code"] == 307
    assert "redirect" in failed["last_error"]
    assert receiver.on("/elsewhere") == []


async def test_410_disables_the_webhook_and_ends_its_pending_deliveries(
    client: httpx.AsyncClient, ctx: AppContext, receiver: Receiver
) -> None:
    key = await new_key(ctx)
    hook = await register(client, key, receiver.url(), ["status_change"])
    receiver.answer("/hook", Answer(status=410))
    await emit(ctx, key)
    await emit(ctx, key)
    assert await DeliveryJobs().run_due(ctx) == 1
    assert len(receiver.on("/hook")) == 1
    found = await deliveries(client, key, hook["webhook_id"])
    assert {d["status"] for d in found} == {"dead"}
    listed = (await client.get("/api/v1/webhooks", headers=key.headers)).json()["webhooks"][0]
    assert listed["is_active"] is False
    assert listed["disabled_reason"] == "gone"
    await emit(ctx, key)
    assert len(await deliveries(client, key, hook["webhook_id"])) == 2  # nothing new fanned out
    reactivated = await client.patch(
        f"/api/v1/webhooks/{hook['webhook_id']}", json={"is_active": True}, headers=key.headers
    )
    assert reactivated.json()["is_active"] is True
    assert reactivated.json()["consecutive_failures"] == 0


async def test_eight_failed_attempts_over_two_days_kill_the_delivery_and_disable_the_webhook(
    client: httpx.AsyncClient, ctx: AppContext, clock: FrozenClock, receiver: Receiver
) -> None:
    key = await new_key(ctx)
    hook = await register(client, key, receiver.url(), ["status_change"])
    receiver.answer("/hook", Answer(status=500))
    await emit(ctx, key)
    created = clock.now()
    for attempt in range(1, schedule.MAX_ATTEMPTS + 1):
        assert await DeliveryJobs().run_due(ctx) == 1
        [delivery] = await deliveries(client, key, hook["webhook_id"])
        assert delivery["attempts"] == attempt
        if attempt < schedule.MAX_ATTEMPTS:
            assert delivery["status"] == "pending"
            due = _at(delivery["next_attempt_at"])
            assert created + schedule.WINDOW_EDGES[attempt - 1] <= due
            assert due <= created + schedule.WINDOW_EDGES[attempt] + timedelta(seconds=1)
            clock.set(due)
    assert clock.now() - created <= timedelta(hours=48)
    assert delivery["status"] == "dead"
    assert delivery["next_attempt_at"] is None
    listed = (await client.get("/api/v1/webhooks", headers=key.headers)).json()["webhooks"][0]
    assert listed["is_active"] is False
    assert listed["disabled_reason"] == "failures"
    assert listed["consecutive_failures"] == schedule.MAX_ATTEMPTS
    assert len(receiver.on("/hook")) == schedule.MAX_ATTEMPTS


async def test_during_a_rotation_both_secrets_sign_then_only_the_new_one(
    client: httpx.AsyncClient, ctx: AppContext, clock: FrozenClock, receiver: Receiver
) -> None:
    key = await new_key(ctx)
    hook = await register(client, key, receiver.url(), ["status_change"])
    rotated = (
        await client.post(
            f"/api/v1/webhooks/{hook['webhook_id']}/rotate-secret", headers=key.headers
        )
    ).json()
    await emit(ctx, key)
    await DeliveryJobs().run_due(ctx)
    [during] = receiver.on("/hook")
    assert len(during.headers["webhook-signature"].split(" ")) == 2
    verify(str(hook["secret"]), during)
    verify(rotated["secret"], during)
    legacy = hmac.new(rotated["secret"].encode(), during.body, hashlib.sha256).hexdigest()
    assert during.headers["x-service-signature"] == legacy
    clock.advance(timedelta(hours=24, seconds=1))
    await emit(ctx, key)
    await DeliveryJobs().run_due(ctx)
    after = receiver.on("/hook")[1]
    assert len(after.headers["webhook-signature"].split(" ")) == 1
    # The receivers' 5-minute tolerance is real time; check the old secret by hand instead.
    old_key = _b64(str(hook["secret"]))
    signed = (
        f"{after.headers['webhook-id']}.{after.headers['webhook-timestamp']}.".encode() + after.body
    )
    old = "v1," + _b64e(hmac.new(old_key, signed, hashlib.sha256).digest())
    assert old not in after.headers["webhook-signature"]


def _b64(secret: str) -> bytes:
    import base64

    return base64.b64decode(secret.removeprefix("whsec_"))


def _b64e(raw: bytes) -> str:
    import base64

    return base64.b64encode(raw).decode()


async def test_replay_sends_the_same_event_under_a_new_delivery_id(
    client: httpx.AsyncClient, ctx: AppContext, receiver: Receiver
) -> None:
    key = await new_key(ctx)
    hook = await register(client, key, receiver.url(), ["status_change"])
    await emit(ctx, key)
    await DeliveryJobs().run_due(ctx)
    [original] = await deliveries(client, key, hook["webhook_id"])
    feed_before = (await client.get("/api/v1/events", headers=key.headers)).json()["events"]
    path = f"/api/v1/webhooks/{hook['webhook_id']}/deliveries/{original['id']}/replay"
    accepted = await client.post(path, headers={**key.headers, "Idempotency-Key": "r1"})
    assert accepted.status_code == 202, accepted.text
    body = accepted.json()
    assert body["replay_of"] == original["id"]
    replay = body["delivery"]
    assert replay["id"] != original["id"]
    assert replay["event_id"] == original["event_id"]
    again = await client.post(path, headers={**key.headers, "Idempotency-Key": "r1"})
    assert again.json() == body
    assert again.headers["idempotent-replayed"] == "true"
    assert_problem(
        await client.post(
            f"/api/v1/webhooks/{hook['webhook_id']}/deliveries/{replay['id']}/replay",
            headers=key.headers,
        ),
        409,
        "delivery_pending",
    )
    await DeliveryJobs().run_due(ctx)
    first, second = receiver.on("/hook")
    verify(str(hook["secret"]), second)
    one, two = orjson.loads(first.body), orjson.loads(second.body)
    assert two["delivery_id"] == replay["id"] == second.headers["webhook-id"]
    assert {k: v for k, v in one.items() if k != "delivery_id"} == {
        k: v for k, v in two.items() if k != "delivery_id"
    }
    feed_after = (await client.get("/api/v1/events", headers=key.headers)).json()["events"]
    assert feed_after == feed_before
    assert len(await deliveries(client, key, hook["webhook_id"])) == 2
    assert_problem(
        await client.post(
            f"/api/v1/webhooks/{hook['webhook_id']}/deliveries/{original['id']}x/replay",
            headers=key.headers,
        ),
        404,
        "delivery_not_found",
    )


async def test_a_name_that_now_resolves_to_a_private_address_is_not_contacted(
    client: httpx.AsyncClient, ctx: AppContext, receiver: Receiver
) -> None:
    key = await new_key(ctx)
    hook = await register(client, key, receiver.url(), ["status_change"])
    async with ctx.transaction() as session:
        await repository.update_webhook(
            session, str(hook["webhook_id"]), {"url": "https://hooks.example.com/hook"}
        )
    await emit(ctx, key)

    async def rebound(host: str, port: int) -> list[str]:
        assert host == "hooks.example.com"
        return ["93.184.216.34", "127.0.0.1"]

    assert await DeliveryJobs(resolver=rebound).run_due(ctx) == 1
    [failed] = await deliveries(client, key, hook["webhook_id"])
    assert failed["status"] == "pending"
    assert failed["last_status_code"] is None
    assert failed["last_error"].startswith("destination refused")
    assert receiver.received == []


async def test_one_attempt_in_flight_per_webhook_and_a_lapsed_lease_is_taken_over(
    client: httpx.AsyncClient, ctx: AppContext, clock: FrozenClock, receiver: Receiver
) -> None:
    key = await new_key(ctx)
    hook = await register(client, key, receiver.url(), ["status_change"])
    for _ in range(3):
        await emit(ctx, key)
    crashed = DeliveryJobs()
    now = clock.now()
    async with ctx.transaction() as session:
        claimed = await repository.claim_webhooks(
            session, crashed.owner, now, now + timedelta(seconds=120), 10
        )
    assert claimed == [hook["webhook_id"]]
    # The "crashed" worker holds the webhook: nobody else attempts it until the lease lapses.
    assert await DeliveryJobs().run_due(ctx) == 0
    clock.advance(timedelta(seconds=121))
    assert await DeliveryJobs().run_due(ctx) == 3
    assert {d["status"] for d in await deliveries(client, key, hook["webhook_id"])} == {"delivered"}
    # The crashed worker no longer holds the webhook: its late outcomes would not be written.
    async with ctx.transaction() as session:
        assert not await repository.holds_lease(session, str(hook["webhook_id"]), crashed.owner)
