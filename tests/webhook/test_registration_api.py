"""Webhook registrations over HTTP: validation, plan caps, ownership, PATCH, DELETE, rotation."""

from __future__ import annotations

import base64
from datetime import datetime, timedelta

import httpx
import pytest

from permitapi.context import AppContext
from permitapi.webhook.jobs import DeliveryJobs
from tests.support.problems import assert_problem
from tests.support.receiver import Receiver
from tests.webhook.conftest import new_key, register
from tests.webhook.test_delivery import emit


async def test_registration_answers_the_secret_once(
    client: httpx.AsyncClient, ctx: AppContext, receiver: Receiver
) -> None:
    key = await new_key(ctx)
    created = await register(
        client,
        key,
        receiver.url(),
        ["status_change", "permit_approved", "status_change"],
        jurisdiction_filter=["ladbs", "aca:sandiego"],
    )
    secret = created["secret"]
    assert isinstance(secret, str)
    assert secret.startswith("whsec_")
    assert 24 <= len(base64.b64decode(secret.removeprefix("whsec_"))) <= 64
    assert created["warning"]
    assert created["events"] == ["status_change", "permit_approved"]
    assert created["jurisdiction_filter"] == ["ladbs", "aca:sandiego"]
    assert created["is_active"] is True
    assert created["consecutive_failures"] == 0
    assert created["last_triggered_at"] is None
    listed = (await client.get("/api/v1/webhooks", headers=key.headers)).json()["webhooks"]
    assert [w["webhook_id"] for w in listed] == [created["webhook_id"]]
    assert "secret" not in listed[0]


@pytest.mark.parametrize(
    ("body", "code", "parameter"),
    [
        ({"url": "https://10.0.0.7/h", "events": ["status_change"]}, "invalid_webhook_url", "url"),
        (
            {"url": "https://2130706433/h", "events": ["status_change"]},
            "invalid_webhook_url",
            "url",
        ),
        (
            {"url": "https://[::ffff:7f00:1]/", "events": ["status_change"]},
            "invalid_webhook_url",
            "url",
        ),
        ({"url": "ftp://example.com/", "events": ["status_change"]}, "invalid_webhook_url", "url"),
        (
            {"url": "https://a:b@example.com/", "events": ["status_change"]},
            "invalid_webhook_url",
            "url",
        ),
        ({"url": "https://203.0.113.9/", "events": ["status_changed"]}, "invalid_event", "events"),
        (
            {
                "url": "https://example.com/",
                "events": ["status_change"],
                "jurisdiction_filter": ["nowhere"],
            },
            "invalid_jurisdiction",
            "jurisdiction_filter",
        ),
    ],
)
async def test_invalid_registrations_are_400_problems(
    client: httpx.AsyncClient, ctx: AppContext, body: dict[str, object], code: str, parameter: str
) -> None:
    key = await new_key(ctx)
    problem = assert_problem(
        await client.post("/api/v1/webhooks", json=body, headers=key.headers), 400, code
    )
    assert problem["parameter"] == parameter
    assert problem["errors"] == [
        {"parameter": parameter, "location": "body", "message": problem["errors"][0]["message"]}  # type: ignore[index]
    ]
    assert (await client.get("/api/v1/webhooks", headers=key.headers)).json() == {"webhooks": []}


async def test_malformed_bodies_are_400(client: httpx.AsyncClient, ctx: AppContext) -> None:
    key = await new_key(ctx)
    for body in (
        {"url": "https://example.com/"},
        {"url": "https://example.com/", "events": []},
        {"url": 5, "events": ["status_change"]},
        {"url": "https://example.com/", "events": ["status_change"], "extra": 1},
    ):
        response = await client.post("/api/v1/webhooks", json=body, headers=key.headers)
        assert response.status_code == 400, (body, response.text)


async def test_plan_caps_active_webhooks(
    client: httpx.AsyncClient, ctx: AppContext, receiver: Receiver
) -> None:
    free = await new_key(ctx, "free")
    first = await register(client, free, receiver.url("/a"))
    refused = assert_problem(
        await client.post(
            "/api/v1/webhooks",
            json={"url": receiver.url("/b"), "events": ["status_change"]},
            headers=free.headers,
        ),
        400,
        "webhook_limit_reached",
    )
    assert refused["plan_limit"] == 1
    assert refused["upgrade_hint"]
    # A paused webhook frees its slot; re-activating it above the cap is refused.
    paused = await client.patch(
        f"/api/v1/webhooks/{first['webhook_id']}", json={"is_active": False}, headers=free.headers
    )
    assert paused.json()["is_active"] is False
    assert paused.json()["disabled_reason"] == "deactivated"
    second = await register(client, free, receiver.url("/b"))
    assert_problem(
        await client.patch(
            f"/api/v1/webhooks/{first['webhook_id']}",
            json={"is_active": True},
            headers=free.headers,
        ),
        400,
        "webhook_limit_reached",
    )
    deleted = await client.delete(f"/api/v1/webhooks/{second['webhook_id']}", headers=free.headers)
    assert deleted.json() == {"status": "deactivated", "webhook_id": second["webhook_id"]}
    again = await client.patch(
        f"/api/v1/webhooks/{first['webhook_id']}", json={"is_active": True}, headers=free.headers
    )
    assert again.json()["is_active"] is True
    assert again.json()["disabled_reason"] is None

    pro = await new_key(ctx, "pro")
    for index in range(10):
        await register(client, pro, receiver.url(f"/p{index}"))
    assert_problem(
        await client.post(
            "/api/v1/webhooks",
            json={"url": receiver.url("/p10"), "events": ["status_change"]},
            headers=pro.headers,
        ),
        400,
        "webhook_limit_reached",
    )


async def test_patch_validates_again_and_changes_only_what_it_names(
    client: httpx.AsyncClient, ctx: AppContext, receiver: Receiver
) -> None:
    key = await new_key(ctx)
    created = await register(
        client, key, receiver.url(), ["status_change"], jurisdiction_filter=["ladbs"]
    )
    path = f"/api/v1/webhooks/{created['webhook_id']}"
    assert_problem(
        await client.patch(path, json={"url": "https://169.254.169.254/"}, headers=key.headers),
        400,
        "invalid_webhook_url",
    )
    assert_problem(
        await client.patch(path, json={"events": ["nope"]}, headers=key.headers),
        400,
        "invalid_event",
    )
    changed = await client.patch(path, json={"events": ["permit_denied"]}, headers=key.headers)
    assert changed.status_code == 200
    body = changed.json()
    assert body["events"] == ["permit_denied"]
    assert body["url"] == created["url"]
    assert body["jurisdiction_filter"] == ["ladbs"]
    cleared = await client.patch(path, json={"jurisdiction_filter": None}, headers=key.headers)
    assert cleared.json()["jurisdiction_filter"] is None
    assert (await client.patch(path, json={}, headers=key.headers)).json() == cleared.json()
    assert "secret" not in cleared.json()


async def test_another_keys_webhook_is_404_everywhere(
    client: httpx.AsyncClient, ctx: AppContext, receiver: Receiver
) -> None:
    owner, other = await new_key(ctx), await new_key(ctx)
    created = await register(client, owner, receiver.url())
    base = f"/api/v1/webhooks/{created['webhook_id']}"
    attempts = [
        client.patch(base, json={"is_active": False}, headers=other.headers),
        client.delete(base, headers=other.headers),
        client.get(f"{base}/deliveries", headers=other.headers),
        client.post(f"{base}/rotate-secret", headers=other.headers),
        client.post(f"{base}/test", headers=other.headers),
        client.post(f"{base}/simulate", headers=other.headers),
        client.post(
            f"{base}/deliveries/00000000-0000-0000-0000-000000000000/replay", headers=other.headers
        ),
    ]
    for pending in attempts:
        assert_problem(await pending, 404, "webhook_not_found")
    assert (await client.get("/api/v1/webhooks", headers=other.headers)).json() == {"webhooks": []}
    assert receiver.received == []
    still = (await client.get("/api/v1/webhooks", headers=owner.headers)).json()["webhooks"]
    assert still[0]["is_active"] is True


async def test_delete_is_the_contracts_soft_deactivation(
    client: httpx.AsyncClient, ctx: AppContext, receiver: Receiver
) -> None:
    """DELETE keeps the webhook listed (is_active false, disabled_reason deleted, deleted_at),
    its deliveries readable, outside the active cap, with no further delivery; it is final:
    changes and probes are 409 webhook_deleted, a second DELETE answers the same."""
    key = await new_key(ctx, "free")  # one active webhook allowed
    created = await register(client, key, receiver.url())
    webhook_id = created["webhook_id"]
    path = f"/api/v1/webhooks/{webhook_id}"
    await emit(ctx, key)
    assert await DeliveryJobs().run_due(ctx) == 1
    await emit(ctx, key)  # still pending when the webhook is deleted

    deleted = await client.delete(path, headers=key.headers)
    assert deleted.json() == {"status": "deactivated", "webhook_id": webhook_id}
    [listed] = (await client.get("/api/v1/webhooks", headers=key.headers)).json()["webhooks"]
    assert listed["webhook_id"] == webhook_id
    assert listed["is_active"] is False
    assert listed["disabled_reason"] == "deleted"
    assert listed["deleted_at"] is not None
    history = await client.get(f"{path}/deliveries", headers=key.headers)
    assert history.status_code == 200, history.text
    statuses = sorted(d["status"] for d in history.json()["deliveries"])
    assert statuses == ["dead", "delivered"]  # the pending one ended with the webhook

    await emit(ctx, key)
    assert await DeliveryJobs().run_due(ctx) == 0
    assert len(receiver.on("/hook")) == 1
    assert (
        len((await client.get(f"{path}/deliveries", headers=key.headers)).json()["deliveries"]) == 2
    )

    again = await client.delete(path, headers=key.headers)
    assert again.json() == {"status": "deactivated", "webhook_id": webhook_id}
    [still] = (await client.get("/api/v1/webhooks", headers=key.headers)).json()["webhooks"]
    assert still == listed
    delivery_id = history.json()["deliveries"][0]["id"]
    for attempt in (
        client.patch(path, json={"is_active": True}, headers=key.headers),
        client.patch(path, json={"events": ["status_change"]}, headers=key.headers),
        client.post(f"{path}/rotate-secret", headers=key.headers),
        client.post(f"{path}/test", headers=key.headers),
        client.post(f"{path}/simulate", headers=key.headers),
        client.post(f"{path}/deliveries/{delivery_id}/replay", headers=key.headers),
    ):
        body = assert_problem(await attempt, 409, "webhook_deleted")
        assert body["deleted_at"] == listed["deleted_at"]

    # Outside the active cap: the free key registers its one active webhook again.
    replacement = await register(client, key, receiver.url("/second"))
    assert replacement["is_active"] is True
    listed_now = (await client.get("/api/v1/webhooks", headers=key.headers)).json()["webhooks"]
    # (both created at the test clock's one instant: listed in id order)
    assert {w["webhook_id"] for w in listed_now} == {webhook_id, replacement["webhook_id"]}


async def test_sandbox_keys_and_missing_keys(client: httpx.AsyncClient, ctx: AppContext) -> None:
    key = await new_key(ctx)
    sandbox = {"X-API-Key": key.sandbox}
    body = {"url": "https://example.com/", "events": ["status_change"]}
    assert_problem(
        await client.post("/api/v1/webhooks", json=body, headers=sandbox),
        403,
        "sandbox_not_supported",
    )
    assert_problem(
        await client.get("/api/v1/webhooks", headers=sandbox), 403, "sandbox_not_supported"
    )
    assert_problem(
        await client.get("/api/v1/events", headers=sandbox), 403, "sandbox_not_supported"
    )
    assert_problem(await client.post("/api/v1/webhooks", json=body), 401, "invalid_api_key")
    assert_problem(await client.get("/api/v1/events"), 401, "invalid_api_key")


async def test_idempotent_registration_creates_one_webhook(
    client: httpx.AsyncClient, ctx: AppContext, receiver: Receiver
) -> None:
    key = await new_key(ctx)
    headers = {**key.headers, "Idempotency-Key": "reg-1"}
    body = {"url": receiver.url(), "events": ["status_change"]}
    first = await client.post("/api/v1/webhooks", json=body, headers=headers)
    second = await client.post("/api/v1/webhooks", json=body, headers=headers)
    assert first.status_code == second.status_code == 201
    assert second.headers["idempotent-replayed"] == "true"
    assert first.json() == second.json()
    listed = (await client.get("/api/v1/webhooks", headers=key.headers)).json()["webhooks"]
    assert len(listed) == 1


async def test_rotation_answers_the_new_secret_and_the_overlap(
    client: httpx.AsyncClient, ctx: AppContext, receiver: Receiver
) -> None:
    key = await new_key(ctx)
    created = await register(client, key, receiver.url())
    rotated = await client.post(
        f"/api/v1/webhooks/{created['webhook_id']}/rotate-secret", headers=key.headers
    )
    assert rotated.status_code == 200
    body = rotated.json()
    assert body.keys() == {"webhook_id", "secret", "previous_secret_valid_until", "warning"}
    assert body["secret"].startswith("whsec_")
    assert body["secret"] != created["secret"]
    overlap_end = datetime.fromisoformat(body["previous_secret_valid_until"].replace("Z", "+00:00"))
    assert overlap_end == ctx.clock.now() + timedelta(hours=24)
