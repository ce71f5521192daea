"""The daily `saved-searches` job on both databases, over fake discovery sources: the silent
baseline, one criteria_match per newly seen permit (feed and a real receiver), partial and
failed reads, criteria changes, pausing, entitlement, the lease, and no credits spent."""

from __future__ import annotations

import asyncio
from datetime import timedelta
from typing import Any

import httpx
import orjson

from permitapi.context import AppContext
from permitapi.kit.clock import isoformat_z
from permitapi.saved_search import repository
from permitapi.saved_search.jobs import SavedSearchEvaluations
from permitapi.sources.base import Blocked, RetryLater
from permitapi.webhook.jobs import DeliveryJobs
from tests.saved_search.conftest import (
    URL,
    Key,
    add_city,
    add_county,
    city_number,
    create,
    feed,
    new_key,
    next_day,
    read,
    set_addon,
    today,
    usage,
)
from tests.support.fake_sources import FakeSearchSource
from tests.support.receiver import Receiver
from tests.webhook.conftest import register


async def run_pass(ctx: AppContext) -> int:
    """One daily pass, as a freshly started worker would run it."""
    return await SavedSearchEvaluations().run_due(ctx)


async def deliver_all(ctx: AppContext) -> None:
    while await DeliveryJobs().run_due(ctx):
        pass


def match_of(number: str, issued: Any) -> dict[str, Any]:
    return {
        "permit_number": number,
        "jurisdiction": "ladbs",
        "address": f"{number} Main St",
        "permit_type": "Electrical",
        "status": "Issued",
        "valuation": 10_000.0,
        "issued_date": issued.isoformat(),
        "applied_date": None,
    }


async def test_baseline_is_silent_then_each_new_permit_emits_one_criteria_match(
    client: httpx.AsyncClient,
    ctx: AppContext,
    sources: dict[str, FakeSearchSource],
    receiver: Receiver,
) -> None:
    key = await new_key(ctx, "pro")
    await register(client, key, receiver.url(), ["criteria_match"])
    day = today(ctx)
    for i in range(5):
        add_city(sources, city_number(i), day - timedelta(days=i))
    add_city(sources, city_number(50), day, permit_type="Plumbing")
    add_county(sources, "UNC-BLDR261100000001", day)
    created = await create(client, key)
    search_id = created["saved_search_id"]
    credits = await usage(client, key)

    assert await run_pass(ctx) == 1
    baseline = (await read(client, key, search_id))["evaluation"]
    now = isoformat_z(ctx.clock.now())
    assert baseline == {
        "state": "monitoring",
        "baseline_taken_at": now,
        "baseline_size": 5,
        "last_evaluated_at": now,
        "last_success_at": now,
        "last_match_at": None,
        "last_error": None,
    }
    assert sources["epicla"].calls == []  # the city scope asks the city only
    await deliver_all(ctx)
    assert await feed(client, key) == []
    assert receiver.on("/hook") == []

    newest = add_city(sources, city_number(10), day)
    late = add_city(sources, city_number(11), day - timedelta(days=3))  # published late
    add_city(sources, city_number(12), day, permit_type="Plumbing")
    assert await run_pass(ctx) == 0  # once a day
    next_day(ctx)
    assert await run_pass(ctx) == 1

    events = await feed(client, key)
    assert [e["event"] for e in events] == ["criteria_match", "criteria_match"]
    assert [e["permit_number"] for e in events] == [late, newest]  # oldest issue date first
    matched_at = isoformat_z(ctx.clock.now())
    assert events[1]["jurisdiction"] == "ladbs"
    assert events[1]["data"] == {
        "saved_search_id": search_id,
        "name": "Electrical in LA",
        "criteria": {"city": "Los Angeles", "permit_type": "Electrical"},
        "match": match_of(newest, day),
        "matched_at": matched_at,
    }
    state = (await read(client, key, search_id))["evaluation"]
    assert state["baseline_size"] == 7
    assert state["last_match_at"] == matched_at
    assert state["baseline_taken_at"] == now  # still the first baseline

    await deliver_all(ctx)
    received = receiver.on("/hook")
    assert len(received) == 2
    payloads = sorted((r.json() for r in received), key=lambda p: str(p["permit_number"]))
    assert [p["event"] for p in payloads] == ["criteria_match", "criteria_match"]
    by_number = {e["permit_number"]: e for e in events}
    for payload in payloads:
        event = by_number[payload["permit_number"]]
        assert payload["event_id"] == event["event_id"]
        assert payload["data"] == event["data"]

    next_day(ctx)
    assert await run_pass(ctx) == 1
    assert len(await feed(client, key)) == 2  # nothing new: nothing emitted
    assert await usage(client, key) == credits  # evaluations cost no credits


async def test_the_baseline_keeps_the_100_newest_and_only_new_permits_fire(
    client: httpx.AsyncClient, ctx: AppContext, sources: dict[str, FakeSearchSource]
) -> None:
    key = await new_key(ctx, "pro")
    day = today(ctx)
    for i in range(130):
        add_city(sources, city_number(i), day - timedelta(days=i // 10))
    created = await create(client, key)
    assert await run_pass(ctx) == 1
    assert (await read(client, key, created["saved_search_id"]))["evaluation"][
        "baseline_size"
    ] == 100
    next_day(ctx)
    fresh = add_city(sources, city_number(500), today(ctx))
    assert await run_pass(ctx) == 1
    events = await feed(client, key)
    assert [e["permit_number"] for e in events] == [fresh]  # not the 30 older ones


async def test_new_permits_beyond_one_page_are_all_announced(
    client: httpx.AsyncClient, ctx: AppContext, sources: dict[str, FakeSearchSource]
) -> None:
    key = await new_key(ctx, "pro")
    day = today(ctx)
    for i in range(10):
        add_city(sources, city_number(i), day - timedelta(days=1 + i))
    await create(client, key)
    assert await run_pass(ctx) == 1
    next_day(ctx)
    added = {add_city(sources, city_number(1000 + i), today(ctx)) for i in range(150)}
    assert await run_pass(ctx) == 1
    events = await feed(client, key)
    assert {e["permit_number"] for e in events} == added
    assert len(events) == 150
    assert len(sources["ladbs"].calls) == 1 + 2  # baseline page, then two pages


async def test_a_partial_or_failed_read_records_the_error_and_emits_nothing(
    client: httpx.AsyncClient, ctx: AppContext, sources: dict[str, FakeSearchSource]
) -> None:
    key = await new_key(ctx, "pro")
    day = today(ctx)
    add_city(sources, city_number(1), day)
    add_county(sources, "UNC-BLDR261100000001", day)
    created = await create(client, key, {"permit_type": "Electrical"})  # both sources
    search_id = created["saved_search_id"]

    # a failed first evaluation is no baseline
    sources["ladbs"].script = ["incomplete"]
    assert await run_pass(ctx) == 1
    state = (await read(client, key, search_id))["evaluation"]
    assert state["state"] == "awaiting_baseline"
    assert state["baseline_size"] == 0
    assert state["last_error"]["code"] == "source_incomplete"
    assert state["last_evaluated_at"] == isoformat_z(ctx.clock.now())
    assert state["last_success_at"] is None

    next_day(ctx)
    assert await run_pass(ctx) == 1
    state = (await read(client, key, search_id))["evaluation"]
    assert (state["state"], state["baseline_size"], state["last_error"]) == ("monitoring", 2, None)

    # one source down: the other's new permit waits for a complete read
    fresh = add_city(sources, city_number(2), today(ctx))
    sources["epicla"].fail_always = RetryLater("epicla", "maintenance", reason="down")
    next_day(ctx)
    assert await run_pass(ctx) == 1
    state = (await read(client, key, search_id))["evaluation"]
    assert state["last_error"]["code"] == "source_unavailable"
    assert state["baseline_size"] == 2
    assert await feed(client, key) == []

    # both down and nothing to show: unverifiable
    sources["ladbs"].fail_always = Blocked("ladbs", "captcha")
    next_day(ctx)
    assert await run_pass(ctx) == 1
    state = (await read(client, key, search_id))["evaluation"]
    assert state["last_error"]["code"] == "source_inconclusive"
    assert await feed(client, key) == []

    sources["ladbs"].fail_always = None
    sources["epicla"].fail_always = None
    next_day(ctx)
    assert await run_pass(ctx) == 1
    assert [e["permit_number"] for e in await feed(client, key)] == [fresh]
    assert (await read(client, key, search_id))["evaluation"]["last_error"] is None


async def test_new_criteria_take_a_fresh_baseline_and_equivalent_ones_do_not(
    client: httpx.AsyncClient, ctx: AppContext, sources: dict[str, FakeSearchSource]
) -> None:
    key = await new_key(ctx, "pro")
    day = today(ctx)
    add_city(sources, city_number(1), day)
    add_city(sources, city_number(2), day, permit_type="Plumbing")
    created = await create(client, key)
    path = f"{URL}/{created['saved_search_id']}"
    assert await run_pass(ctx) == 1
    first_baseline = (await read(client, key, created["saved_search_id"]))["evaluation"]

    same = {"city": "los angeles", "permit_type": "electrical"}
    patched = await client.patch(path, json={"criteria": same}, headers=key.headers)
    assert patched.status_code == 200, patched.text
    assert patched.json()["criteria"] == same
    assert patched.json()["evaluation"] == first_baseline

    plumbing = {"city": "Los Angeles", "permit_type": "Plumbing"}
    patched = await client.patch(path, json={"criteria": plumbing}, headers=key.headers)
    evaluation = patched.json()["evaluation"]
    assert (evaluation["state"], evaluation["baseline_size"]) == ("awaiting_baseline", 0)
    assert evaluation["baseline_taken_at"] is None

    next_day(ctx)
    add_city(sources, city_number(3), today(ctx), permit_type="Plumbing")
    assert await run_pass(ctx) == 1  # the fresh baseline: silent
    assert await feed(client, key) == []
    assert (await read(client, key, created["saved_search_id"]))["evaluation"]["baseline_size"] == 2

    next_day(ctx)
    fresh = add_city(sources, city_number(4), today(ctx), permit_type="Plumbing")
    add_city(sources, city_number(5), today(ctx))  # electrical: no longer wanted
    assert await run_pass(ctx) == 1
    [event] = await feed(client, key)
    assert event["permit_number"] == fresh
    assert event["data"]["criteria"] == plumbing


async def test_pausing_keeps_the_baseline_and_permits_seen_while_paused_are_new_after(
    client: httpx.AsyncClient, ctx: AppContext, sources: dict[str, FakeSearchSource]
) -> None:
    key = await new_key(ctx, "pro")
    add_city(sources, city_number(1), today(ctx))
    created = await create(client, key)
    path = f"{URL}/{created['saved_search_id']}"
    assert await run_pass(ctx) == 1
    before = (await read(client, key, created["saved_search_id"]))["evaluation"]

    await client.patch(path, json={"status": "paused"}, headers=key.headers)
    next_day(ctx)
    during = add_city(sources, city_number(2), today(ctx))
    assert await run_pass(ctx) == 0
    paused = (await read(client, key, created["saved_search_id"]))["evaluation"]
    assert paused == {**before, "state": "paused"}

    resumed = await client.patch(path, json={"status": "active"}, headers=key.headers)
    assert resumed.json()["evaluation"] == before
    next_day(ctx)
    assert await run_pass(ctx) == 1
    assert [e["permit_number"] for e in await feed(client, key)] == [during]


async def test_searches_of_keys_without_the_add_on_are_not_evaluated(
    client: httpx.AsyncClient, ctx: AppContext, sources: dict[str, FakeSearchSource]
) -> None:
    key = await new_key(ctx, "developer")
    add_city(sources, city_number(1), today(ctx))
    created = await create(client, key)
    await set_addon(ctx, key, enabled=False)
    assert await run_pass(ctx) == 0
    assert sources["ladbs"].calls == []
    state = (await read(client, key, created["saved_search_id"]))["evaluation"]
    assert (state["state"], state["last_evaluated_at"]) == ("suspended", None)
    await set_addon(ctx, key, enabled=True)
    next_day(ctx)
    assert await run_pass(ctx) == 1


async def test_one_pass_a_day_across_concurrent_workers(
    client: httpx.AsyncClient, ctx: AppContext, sources: dict[str, FakeSearchSource]
) -> None:
    keys: list[Key] = [await new_key(ctx, "pro") for _ in range(3)]
    add_city(sources, city_number(1), today(ctx))
    for key in keys:
        await create(client, key)
    sources["ladbs"].latency_s = 0.05  # the passes overlap
    workers = [SavedSearchEvaluations() for _ in range(4)]
    handled = await asyncio.gather(*(w.run_due(ctx) for w in workers))
    assert sorted(handled) == [0, 0, 0, 3]
    assert len(sources["ladbs"].calls) == 3
    assert [await w.run_due(ctx) for w in workers] == [0, 0, 0, 0]
    ctx.clock.advance(timedelta(hours=23))  # type: ignore[attr-defined]
    assert await run_pass(ctx) == 0
    ctx.clock.advance(timedelta(hours=1))  # type: ignore[attr-defined]
    assert await run_pass(ctx) == 3


async def test_an_evaluation_overtaken_by_new_criteria_writes_nothing(
    client: httpx.AsyncClient, ctx: AppContext, sources: dict[str, FakeSearchSource]
) -> None:
    key = await new_key(ctx, "pro")
    add_city(sources, city_number(1), today(ctx))
    created = await create(client, key)
    sources["ladbs"].latency_s = 0.3
    running = asyncio.create_task(run_pass(ctx))
    await asyncio.sleep(0.1)  # the pass is reading the old criteria
    patched = await client.patch(
        f"{URL}/{created['saved_search_id']}", json={"criteria": {"zip": "90012"}},
        headers=key.headers,
    )  # fmt: skip
    assert patched.status_code == 200
    assert await running == 0  # read under the old criteria: not recorded
    state = (await read(client, key, created["saved_search_id"]))["evaluation"]
    assert (state["state"], state["baseline_size"], state["last_evaluated_at"]) == (
        "awaiting_baseline", 0, None,
    )  # fmt: skip


async def test_deleting_removes_the_identities(
    client: httpx.AsyncClient, ctx: AppContext, sources: dict[str, FakeSearchSource]
) -> None:
    key = await new_key(ctx, "pro")
    add_city(sources, city_number(1), today(ctx))
    created = await create(client, key)
    assert await run_pass(ctx) == 1
    async with ctx.sessionmaker() as session:
        assert len(await repository.identities_of(session, created["saved_search_id"])) == 1
    response = await client.delete(f"{URL}/{created['saved_search_id']}", headers=key.headers)
    assert response.status_code == 200
    async with ctx.sessionmaker() as session:
        assert await repository.identities_of(session, created["saved_search_id"]) == set()


async def test_the_owner_is_the_only_recipient(
    client: httpx.AsyncClient,
    ctx: AppContext,
    sources: dict[str, FakeSearchSource],
    receiver: Receiver,
) -> None:
    owner, other = await new_key(ctx, "pro"), await new_key(ctx, "pro")
    await register(client, other, receiver.url("/other"), ["criteria_match"])
    await register(client, owner, receiver.url("/owner"), ["criteria_match", "permit_created"])
    await register(client, owner, receiver.url("/status"), ["status_change"])
    await create(client, owner)
    assert await run_pass(ctx) == 1
    next_day(ctx)
    add_city(sources, city_number(7), today(ctx))
    assert await run_pass(ctx) == 1
    await deliver_all(ctx)
    [got] = receiver.on("/owner")
    assert orjson.loads(got.body)["event"] == "criteria_match"
    assert receiver.on("/other") == receiver.on("/status") == []
    assert await feed(client, other) == []
