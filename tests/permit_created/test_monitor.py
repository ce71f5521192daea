"""The daily `permit-created` monitor on both databases: a silent baseline, then one event
per newly observed identity in the three-day window to the entitled, subscribed keys only;
partial, failed and capped reads emit nothing and are retried later; one pass a day across
workers; no credits."""

from __future__ import annotations

import asyncio
from datetime import date, timedelta
from typing import Any

import httpx
import pytest

from permitapi.account import service as accounts
from permitapi.context import AppContext
from permitapi.kit.clock import isoformat_z
from permitapi.permit_created import jobs as monitor_module
from permitapi.permit_created import repository
from permitapi.permit_created.jobs import PermitCreatedMonitor
from permitapi.sources.base import RetryLater
from permitapi.webhook.jobs import DeliveryJobs
from tests.saved_search.conftest import (
    add_city,
    add_county,
    city_number,
    feed,
    new_key,
    next_day,
    today,
    usage,
)
from tests.support.accounts import make_account
from tests.support.fake_sources import FakeSearchSource
from tests.support.receiver import Receiver
from tests.webhook.conftest import Key, register


async def run_pass(ctx: AppContext) -> int:
    return await PermitCreatedMonitor().run_due(ctx)


async def deliver_all(ctx: AppContext) -> None:
    while await DeliveryJobs().run_due(ctx):
        pass


def county_number(i: int) -> str:
    return f"UNC-BLDR2611{i:02d}000001"


async def subscribed(
    client: httpx.AsyncClient, ctx: AppContext, receiver: Receiver, path: str = "/hook"
) -> Key:
    key = await new_key(ctx, "pro")
    await register(client, key, receiver.url(path), ["permit_created"])
    return key


def seed_window(sources: dict[str, FakeSearchSource], day: date) -> None:
    """Three city and two county permits inside the window, one city permit before it."""
    for i in range(3):
        add_city(sources, city_number(i), day - timedelta(days=i))
    add_city(sources, city_number(3), day - timedelta(days=3))
    add_county(sources, county_number(1), day)
    add_county(sources, county_number(2), day - timedelta(days=1))


async def test_baseline_then_events_only_to_entitled_subscribed_keys(
    client: httpx.AsyncClient,
    ctx: AppContext,
    sources: dict[str, FakeSearchSource],
    receiver: Receiver,
) -> None:
    entitled = await subscribed(client, ctx, receiver, "/entitled")
    other_event = await new_key(ctx, "pro")
    await register(client, other_event, receiver.url("/other-event"), ["status_change"])
    no_addon = await make_account(ctx, "developer", discovery_addon=False)
    async with ctx.sessionmaker() as session:
        principal = await accounts.resolve_key(session, no_addon.live_key)
    assert principal is not None
    no_addon_key = Key(no_addon.live_key, principal.api_key_id, no_addon.sandbox_key)
    await register(client, no_addon_key, receiver.url("/no-addon"), ["permit_created"])
    free = await new_key(ctx, "free")
    await register(client, free, receiver.url("/free"), ["permit_created"])
    county_only = await new_key(ctx, "developer")
    await register(
        client, county_only, receiver.url("/county"), ["permit_created"],
        jurisdiction_filter=["epicla"],
    )  # fmt: skip
    paused = await new_key(ctx, "pro")
    hook = await register(client, paused, receiver.url("/paused"), ["permit_created"])
    await client.patch(
        f"/api/v1/webhooks/{hook['webhook_id']}", json={"is_active": False},
        headers=paused.headers,
    )  # fmt: skip
    gone = await new_key(ctx, "enterprise")
    await register(client, gone, receiver.url("/gone"), ["permit_created"])
    async with ctx.transaction() as session:
        await accounts.deactivate_key(session, gone.value, ctx.clock.now())
    seed_window(sources, today(ctx))
    credits = await usage(client, entitled)

    assert await run_pass(ctx) == 5  # the baseline: the window's identities, silently
    await deliver_all(ctx)
    assert receiver.received == []
    assert await feed(client, entitled) == []
    criteria = sources["ladbs"].calls[0]
    # No upper bound: a source stamping a later day than ours is still read.
    assert (criteria.date_from, criteria.date_to) == (today(ctx) - timedelta(days=2), None)

    next_day(ctx)
    day = today(ctx)
    newest = add_city(sources, city_number(10), day)
    late = add_city(sources, city_number(11), day - timedelta(days=2))  # published late
    add_city(sources, city_number(12), day - timedelta(days=4))  # before the window
    county = add_county(sources, county_number(10), day - timedelta(days=1))
    assert await run_pass(ctx) == 4 + 3  # still in the window: 4 seen before, 3 new

    events = await feed(client, entitled)
    assert [e["permit_number"] for e in events] == [late, county, newest]  # oldest first
    assert {e["event"] for e in events} == {"permit_created"}
    first_observed = isoformat_z(ctx.clock.now())
    assert events[2]["jurisdiction"] == "ladbs"
    assert events[2]["data"] == {
        "permit": {
            "permit_number": newest,
            "jurisdiction": "ladbs",
            "address": f"{newest} Main St",
            "permit_type": "Electrical",
            "status": "Issued",
            "valuation": 10_000.0,
            "issued_date": day.isoformat(),
            "applied_date": None,
        },
        "first_observed_at": first_observed,
    }
    assert [e["permit_number"] for e in await feed(client, county_only)] == [county]
    for key in (other_event, no_addon_key, free, paused):
        assert await feed(client, key) == []

    await deliver_all(ctx)
    assert sorted(r.json()["permit_number"] for r in receiver.on("/entitled")) == sorted(  # type: ignore[type-var]
        [late, county, newest]
    )
    assert [r.json()["event"] for r in receiver.on("/entitled")] == ["permit_created"] * 3
    assert [r.json()["permit_number"] for r in receiver.on("/county")] == [county]
    for path in ("/other-event", "/no-addon", "/free", "/paused", "/gone"):
        assert receiver.on(path) == [], path

    next_day(ctx)
    assert await run_pass(ctx) > 0
    assert len(await feed(client, entitled)) == 3  # nothing new, nothing again
    assert await usage(client, entitled) == credits  # no credits consumed


async def test_a_partial_or_failed_read_emits_nothing_and_is_retried_later(
    client: httpx.AsyncClient,
    ctx: AppContext,
    sources: dict[str, FakeSearchSource],
    receiver: Receiver,
) -> None:
    key = await subscribed(client, ctx, receiver)
    seed_window(sources, today(ctx))
    # a failed first pass is no baseline
    sources["epicla"].fail_always = RetryLater("epicla", "maintenance", reason="down")
    assert await run_pass(ctx) == 0
    async with ctx.sessionmaker() as session:
        assert await repository.observed_among(session, [("ladbs", city_number(0))]) == set()
    sources["epicla"].fail_always = None
    assert await run_pass(ctx) == 0  # retried later, not at once
    assert len(sources["ladbs"].calls) == 1
    ctx.clock.advance(timedelta(minutes=31))  # type: ignore[attr-defined]
    assert await run_pass(ctx) == 5  # the baseline
    assert await feed(client, key) == []

    next_day(ctx)
    fresh = add_city(sources, city_number(20), today(ctx))
    sources["ladbs"].script = ["incomplete"]
    assert await run_pass(ctx) == 0
    assert await feed(client, key) == []
    ctx.clock.advance(timedelta(minutes=29))  # type: ignore[attr-defined]
    assert await run_pass(ctx) == 0
    ctx.clock.advance(timedelta(minutes=2))  # type: ignore[attr-defined]
    assert await run_pass(ctx) > 0
    assert [e["permit_number"] for e in await feed(client, key)] == [fresh]


async def test_a_capped_read_records_nothing(
    client: httpx.AsyncClient,
    ctx: AppContext,
    sources: dict[str, FakeSearchSource],
    receiver: Receiver,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    key = await subscribed(client, ctx, receiver)
    for i in range(150):
        add_city(sources, city_number(i), today(ctx))
    monkeypatch.setattr(monitor_module, "MAX_PAGES", 1)
    assert await run_pass(ctx) == 0
    async with ctx.sessionmaker() as session:
        assert await repository.observed_among(session, [("ladbs", city_number(0))]) == set()
    monkeypatch.setattr(monitor_module, "MAX_PAGES", 2)
    ctx.clock.advance(timedelta(minutes=31))  # type: ignore[attr-defined]
    assert await run_pass(ctx) == 150  # still the baseline
    assert await feed(client, key) == []


async def test_one_pass_a_day_across_concurrent_workers(
    client: httpx.AsyncClient, ctx: AppContext, sources: dict[str, FakeSearchSource]
) -> None:
    seed_window(sources, today(ctx))
    sources["ladbs"].latency_s = 0.05
    monitors = [PermitCreatedMonitor() for _ in range(3)]
    handled = await asyncio.gather(*(m.run_due(ctx) for m in monitors))
    assert sorted(handled) == [0, 0, 5]
    assert len(sources["ladbs"].calls) == len(sources["epicla"].calls) == 1
    assert [await m.run_due(ctx) for m in monitors] == [0, 0, 0]
    ctx.clock.advance(timedelta(hours=23, minutes=59))  # type: ignore[attr-defined]
    assert await run_pass(ctx) == 0
    ctx.clock.advance(timedelta(minutes=1))  # type: ignore[attr-defined]
    assert await run_pass(ctx) > 0


async def test_over_the_portal_simulator(
    client: httpx.AsyncClient, ctx: AppContext, simulator: Any, receiver: Receiver
) -> None:
    import dataclasses

    key = await subscribed(client, ctx, receiver)
    checked = await run_pass(ctx)
    assert checked > 0
    assert await feed(client, key) == []
    template = max(simulator.of("epicla"), key=lambda p: p.issued_date or date.min)
    number = "UNC-BLDR261125009999"
    next_day(ctx)
    issued = today(ctx) - timedelta(days=1)
    simulator.put(dataclasses.replace(template, permit_number=number, issued_date=issued))
    assert await run_pass(ctx) > 0
    [event] = await feed(client, key)
    assert (event["permit_number"], event["jurisdiction"]) == (number, "epicla")
    assert event["data"]["permit"]["issued_date"] == issued.isoformat()
