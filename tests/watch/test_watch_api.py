"""POST/DELETE /permits/{n}/watch and GET /permits/watches: enrollment, caps, entitlements,
the lookup's 300/404 answers, and the key's list."""

from __future__ import annotations

import httpx

from permitapi.account import repository as accounts
from permitapi.context import AppContext
from tests.support.fake_portal import FakePortal, snapshot
from tests.support.problems import assert_problem
from tests.support.receiver import Receiver
from tests.webhook.conftest import Key, new_key, register

LADBS = "21030-20000-00256"
LADBS_OTHER = "21030-20000-00257"
SHARED = "BLD2024-001234"


async def watch(client: httpx.AsyncClient, key: Key, number: str, **params: str) -> httpx.Response:
    return await client.post(f"/api/v1/permits/{number}/watch", params=params, headers=key.headers)


async def test_enroll_list_and_unwatch(
    client: httpx.AsyncClient, ctx: AppContext, portal: FakePortal, receiver: Receiver
) -> None:
    portal.add(snapshot("ladbs", LADBS, raw_status="Plan Check"))
    key = await new_key(ctx, "developer")
    created = await watch(client, key, LADBS)
    assert created.status_code == 201, created.text
    body = created.json()
    assert body == {
        "permit_number": LADBS,
        "jurisdiction": "ladbs",
        "jurisdiction_display": body["jurisdiction_display"],
        "status": "Plan Check",
        "status_phase": body["status_phase"],
        "watching": True,
        "created_at": body["created_at"],
        "warning": body["warning"],
    }
    assert "webhook" in body["warning"]
    assert portal.total_requests == 1  # read once: never looked up before
    again = await watch(client, key, LADBS)
    assert again.status_code == 200
    assert again.json()["created_at"] == body["created_at"]
    assert portal.total_requests == 1
    await register(client, key, receiver.url(), ["status_change"])
    portal.add(snapshot("ladbs", LADBS_OTHER))
    second = (await watch(client, key, LADBS_OTHER)).json()
    assert "warning" not in second
    listed = (await client.get("/api/v1/permits/watches", headers=key.headers)).json()
    assert listed["total"] == 2
    assert listed["plan_limit"] == 10
    assert listed["remaining"] == 8
    assert sorted(w["permit_number"] for w in listed["watches"]) == [LADBS, LADBS_OTHER]
    assert listed["watches"][0].keys() == {
        "permit_number",
        "jurisdiction",
        "status",
        "created_at",
        "last_event_at",
    }
    removed = await client.delete(f"/api/v1/permits/{LADBS}/watch", headers=key.headers)
    assert removed.json() == {"status": "unwatched", "permit_number": LADBS}
    assert_problem(
        await client.delete(f"/api/v1/permits/{LADBS}/watch", headers=key.headers),
        404,
        "watch_not_found",
    )
    listed = (await client.get("/api/v1/permits/watches", headers=key.headers)).json()
    assert listed["total"] == 1
    # Another key's watches are its own.
    other = await new_key(ctx)
    assert (await client.get("/api/v1/permits/watches", headers=other.headers)).json()["total"] == 0
    assert_problem(
        await client.delete(f"/api/v1/permits/{LADBS_OTHER}/watch", headers=other.headers),
        404,
        "watch_not_found",
    )


async def test_plan_caps_and_a_downgrade_keeps_existing_watches(
    client: httpx.AsyncClient, ctx: AppContext, portal: FakePortal
) -> None:
    numbers = [f"21030-20000-0030{i}" for i in range(3)]
    for number in numbers:
        portal.add(snapshot("ladbs", number))
    free = await new_key(ctx, "free")
    assert (await watch(client, free, numbers[0])).status_code == 201
    refused = assert_problem(await watch(client, free, numbers[1]), 400, "watch_limit_reached")
    assert refused["plan_limit"] == 1
    assert refused["upgrade_hint"]
    # Already watching answers 200 even at the cap.
    assert (await watch(client, free, numbers[0])).status_code == 200

    pro = await new_key(ctx, "pro")
    for number in numbers[:2]:
        assert (await watch(client, pro, number)).status_code == 201
    async with ctx.sessionmaker() as session:
        from permitapi.account import service

        principal = await service.resolve_key(session, pro.value)
    assert principal is not None
    async with ctx.transaction() as session:
        await accounts.set_plan(session, principal.account_id, "free")
    listed = (await client.get("/api/v1/permits/watches", headers=pro.headers)).json()
    assert listed["total"] == 2
    assert listed["plan_limit"] == 1
    assert listed["remaining"] == 0
    assert_problem(await watch(client, pro, numbers[2]), 400, "watch_limit_reached")


async def test_the_lookups_answers_and_entitlements(
    client: httpx.AsyncClient, ctx: AppContext, portal: FakePortal
) -> None:
    key = await new_key(ctx)
    assert_problem(await watch(client, key, "21030-20000-99999"), 404, "permit_not_found")
    assert_problem(await watch(client, key, "hello"), 404, "jurisdiction_not_supported")
    ambiguous = assert_problem(await watch(client, key, SHARED), 300, "multiple_jurisdictions")
    assert ambiguous["candidates"]
    assert_problem(
        await watch(client, key, LADBS, jurisdiction="nowhere"), 400, "invalid_jurisdiction"
    )
    sandbox = {"X-API-Key": key.sandbox}
    assert_problem(
        await client.post(f"/api/v1/permits/{LADBS}/watch", headers=sandbox),
        403,
        "sandbox_not_supported",
    )
    assert_problem(
        await client.get("/api/v1/permits/watches", headers=sandbox), 403, "sandbox_not_supported"
    )
    assert_problem(await client.post(f"/api/v1/permits/{LADBS}/watch"), 401, "invalid_api_key")
    assert (await client.get("/api/v1/permits/watches", headers=key.headers)).json()["total"] == 0
    usage = (await client.get("/api/v1/usage", headers=key.headers)).json()
    assert usage["lookup"]["used"] == 0  # watches cost no credits
