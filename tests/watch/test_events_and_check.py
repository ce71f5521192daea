"""Permit events of watched permits from every observation, watch completion, and the daily
check (change-feed batching and one-by-one reads)."""

from __future__ import annotations

import dataclasses
from datetime import date, timedelta
from typing import Any

import httpx
import pytest
from standardwebhooks import Webhook as Verifier

from permitapi.context import AppContext
from permitapi.kit.clock import FrozenClock
from permitapi.permit.lookup.refresh import refresh
from permitapi.sources.base import Inspection, NormalizedStatus
from permitapi.sources.registry import Jurisdiction
from permitapi.watch.jobs import WatchCheck, WatchCheckIncomplete
from permitapi.webhook.jobs import DeliveryJobs
from tests.support.fake_portal import FakePortal, snapshot
from tests.support.receiver import Receiver
from tests.watch.test_watch_api import LADBS, watch
from tests.webhook.conftest import Key, new_key, register

ACCELA = "PMT-3200001"


class FeedPortal(FakePortal):
    """A fake with a change feed, as LADBS and EPIC-LA have: one request per call."""

    def __init__(self) -> None:
        super().__init__()
        self.feed_requests = 0

    def install(self, ctx: AppContext) -> FeedPortal:
        """LADBS has the feed; the other families are served without one, from the same
        permits and request counts."""
        plain = FakePortal()
        plain.permits = self.permits
        plain.requests = self.requests
        ctx.gateway.use_adapter("ladbs", self)
        for family in ("epicla", "aca"):
            ctx.gateway.use_adapter(family, plain)
        return self

    async def change_signatures(
        self, jurisdiction: Jurisdiction, permit_numbers: list[str]
    ) -> dict[str, str]:
        self.feed_requests += 1
        found = {}
        for number in permit_numbers:
            snap = self.permits.get((jurisdiction.slug, number.upper()))
            if snap is not None:
                found[number] = f"{snap.raw_status}|{snap.status_date}"
        return found


def change(portal: FakePortal, slug: str, number: str, **values: Any) -> None:
    key = (slug, number.upper())
    portal.permits[key] = dataclasses.replace(portal.permits[key], **values)


async def feed(client: httpx.AsyncClient, key: Key) -> list[dict[str, Any]]:
    events: list[dict[str, Any]] = (await client.get("/api/v1/events", headers=key.headers)).json()[
        "events"
    ]
    return events


async def test_a_status_change_emits_the_events_its_table_names(
    client: httpx.AsyncClient, ctx: AppContext, portal: FakePortal, receiver: Receiver
) -> None:
    portal.add(snapshot("ladbs", LADBS, "Plan Check", NormalizedStatus.IN_REVIEW))
    watcher, second, bystander = await new_key(ctx), await new_key(ctx), await new_key(ctx)
    hook = await register(client, watcher, receiver.url(), ["status_change", "permit_approved"])
    assert (await watch(client, watcher, LADBS)).status_code == 201
    assert (await watch(client, second, LADBS)).status_code == 201
    # A status lookup by anyone observes the permit.
    change(portal, "ladbs", LADBS, raw_status="Issued", status=NormalizedStatus.ISSUED)
    looked = await client.get(
        f"/api/v1/permits/{LADBS}/status",
        params={"force_refresh": "true"},
        headers=bystander.headers,
    )
    assert looked.status_code == 200, looked.text
    mine = await feed(client, watcher)
    assert [e["event"] for e in mine] == ["status_change", "permit_approved"]
    assert mine[0]["data"] == {
        "old_status": "in_review",
        "new_status": "issued",
        "old_portal_status": "Plan Check",
        "new_portal_status": "Issued",
        "changed_at": mine[0]["data"]["changed_at"],
    }
    assert mine[0]["event_id"] != mine[1]["event_id"]
    assert [e["event_id"] for e in await feed(client, second)] == [e["event_id"] for e in mine]
    assert await feed(client, bystander) == []
    await DeliveryJobs().run_due(ctx)
    delivered = receiver.on("/hook")
    assert [r.headers["x-service-event"] for r in delivered] == ["status_change", "permit_approved"]
    for received in delivered:
        Verifier(str(hook["secret"])).verify(received.body, received.headers)
    listed = (await client.get("/api/v1/permits/watches", headers=watcher.headers)).json()
    assert listed["watches"][0]["last_event_at"] is not None
    # The same representation observed again emits nothing.
    await refresh(ctx, ctx.directory.get("ladbs"), LADBS)  # type: ignore[arg-type]
    assert len(await feed(client, watcher)) == 2


async def test_inspections_corrections_and_a_terminal_status(
    client: httpx.AsyncClient, ctx: AppContext, portal: FakePortal
) -> None:
    base = snapshot("ladbs", LADBS, "Issued", NormalizedStatus.ISSUED)
    portal.add(
        dataclasses.replace(base, inspections=[Inspection("Framing", date(2026, 9, 1), "Approved")])
    )
    key = await new_key(ctx)
    await watch(client, key, LADBS)
    jurisdiction = ctx.directory.get("ladbs")
    assert jurisdiction is not None
    change(
        portal,
        "ladbs",
        LADBS,
        inspections=[
            Inspection("Framing", date(2026, 9, 1), "Approved"),
            Inspection("Final", date(2026, 11, 20), "Approved", "J. Rivera"),
        ],
    )
    await refresh(ctx, jurisdiction, LADBS)
    change(
        portal,
        "ladbs",
        LADBS,
        raw_status="Corrections Issued",
        status=NormalizedStatus.APPLICANT_ACTION,
    )
    await refresh(ctx, jurisdiction, LADBS)
    change(portal, "ladbs", LADBS, raw_status="Permit Expired", status=NormalizedStatus.EXPIRED)
    await refresh(ctx, jurisdiction, LADBS)
    events = await feed(client, key)
    assert [e["event"] for e in events] == [
        "inspection_complete",
        "status_change",
        "corrections_required",
        "status_change",
        "permit_denied",
    ]
    assert events[0]["data"]["inspection"] == {
        "type": "Final",
        "date": "2026-11-20",
        "result": "Approved",
        "inspector": "J. Rivera",
    }
    assert events[2]["data"]["status"] == "applicant_action"
    # Expired is terminal: the watch is completed, its slot free, and re-watching is allowed.
    listed = (await client.get("/api/v1/permits/watches", headers=key.headers)).json()
    assert listed["total"] == 0
    change(portal, "ladbs", LADBS, raw_status="Reinstated", status=NormalizedStatus.ISSUED)
    await refresh(ctx, jurisdiction, LADBS)
    assert len(await feed(client, key)) == 5  # nobody watches it any more
    assert (await watch(client, key, LADBS)).status_code == 201


async def test_the_daily_check_batches_change_feeds_and_fetches_only_changes(
    client: httpx.AsyncClient, ctx: AppContext, clock: FrozenClock
) -> None:
    portal = FeedPortal().install(ctx)
    numbers = [f"21030-20000-{n:05d}" for n in range(1, 451)]
    for number in numbers:
        portal.add(snapshot("ladbs", number, "Plan Check", NormalizedStatus.IN_REVIEW))
    portal.add(snapshot("aca:sandiego", ACCELA, "Issued", NormalizedStatus.ISSUED))
    key = await new_key(ctx, "enterprise")
    for number in [*numbers[:240], ACCELA]:
        response = await watch(
            client, key, number, **({"jurisdiction": "aca:sandiego"} if number == ACCELA else {})
        )
        assert response.status_code == 201, response.text
    enrolled = portal.total_requests
    assert enrolled == 241
    # Nothing is due before a day has passed.
    check = WatchCheck()
    assert await check.run_due(ctx) == 0
    assert portal.feed_requests == 0
    change(portal, "ladbs", numbers[7], raw_status="Issued", status=NormalizedStatus.ISSUED)
    clock.advance(timedelta(days=1, hours=2))
    assert await check.run_due(ctx) == 241
    # One feed call for every due LADBS permit (the real adapters send 200 per request:
    # bench/watch_check.py counts those against the simulator).
    assert portal.feed_requests == 1
    # Full reads: the changed LADBS permit and the Accela permit (no feed).
    assert portal.total_requests - enrolled == 2
    assert check.last.changed == 2
    assert check.last.emitted == 2  # status_change + permit_approved
    assert [e["permit_number"] for e in await feed(client, key)] == [numbers[7]] * 2
    # Not due again until the next day; then unchanged permits cost feed queries only.
    assert await check.run_due(ctx) == 0
    clock.advance(timedelta(days=1, hours=1))
    before = portal.total_requests
    assert await check.run_due(ctx) == 241
    assert portal.feed_requests == 2
    assert portal.total_requests - before == 1  # the Accela permit, read in full daily
    assert check.last.emitted == 0


async def test_a_failing_feed_leaves_permits_due_and_emits_nothing(
    client: httpx.AsyncClient, ctx: AppContext, clock: FrozenClock
) -> None:
    from permitapi.sources.base import RetryLater

    portal = FeedPortal().install(ctx)
    portal.add(snapshot("ladbs", LADBS, "Plan Check", NormalizedStatus.IN_REVIEW))
    key = await new_key(ctx)
    await watch(client, key, LADBS)
    change(portal, "ladbs", LADBS, raw_status="Issued", status=NormalizedStatus.ISSUED)
    portal.fault = RetryLater("ladbs", "down", reason="down")
    original = portal.change_signatures

    async def failing(jurisdiction: Jurisdiction, numbers: list[str]) -> dict[str, str]:
        await original(jurisdiction, numbers)
        raise RetryLater("ladbs", "feed down", reason="down")

    portal.change_signatures = failing  # type: ignore[method-assign]
    clock.advance(timedelta(days=1, hours=2))
    check = WatchCheck()
    assert await check.run_due(ctx) == 0
    assert check.last.failed == 1
    assert await feed(client, key) == []
    portal.change_signatures = original  # type: ignore[method-assign]
    portal.fault = None
    clock.advance(timedelta(minutes=31))
    assert await check.run_due(ctx) == 1
    assert [e["event"] for e in await feed(client, key)] == ["status_change", "permit_approved"]


async def test_one_worker_runs_a_check_pass_at_a_time(
    client: httpx.AsyncClient, ctx: AppContext, clock: FrozenClock
) -> None:
    portal = FeedPortal().install(ctx)
    portal.add(snapshot("ladbs", LADBS, "Plan Check", NormalizedStatus.IN_REVIEW))
    key = await new_key(ctx)
    await watch(client, key, LADBS)
    clock.advance(timedelta(days=1, hours=2))
    first, second = WatchCheck(), WatchCheck()
    assert await first.lease.claim(ctx)  # the first worker is mid-pass
    assert await second.run_due(ctx) == 0
    assert portal.feed_requests == 0
    async with ctx.transaction() as session:
        await first.lease.complete(session, clock.now())
    # The pass just completed: nobody runs another until its period has passed.
    assert await second.run_due(ctx) == 0
    clock.advance(timedelta(minutes=6))
    assert await second.run_due(ctx) == 1
    assert portal.feed_requests == 1


async def test_a_jurisdiction_that_crashes_does_not_stop_the_others(
    client: httpx.AsyncClient, ctx: AppContext, clock: FrozenClock
) -> None:
    portal = FeedPortal().install(ctx)
    portal.add(snapshot("ladbs", LADBS, "Plan Check", NormalizedStatus.IN_REVIEW))
    portal.add(snapshot("aca:sandiego", ACCELA, "Issued", NormalizedStatus.ISSUED))
    key = await new_key(ctx, "enterprise")
    assert (await watch(client, key, LADBS)).status_code == 201
    assert (await watch(client, key, ACCELA, jurisdiction="aca:sandiego")).status_code == 201
    change(portal, "ladbs", LADBS, raw_status="Issued", status=NormalizedStatus.ISSUED)
    check = WatchCheck()

    async def crash(*_args: Any) -> None:
        raise RuntimeError("a database error, say")

    # Accela sorts first ("aca:sandiego" < "ladbs"): before, its crash ended the pass there.
    check._one_by_one = crash  # type: ignore[method-assign]
    clock.advance(timedelta(days=1, hours=2))
    with pytest.raises(WatchCheckIncomplete, match="aca:sandiego"):
        await check.run_due(ctx)
    assert check.last.checked == 1  # LADBS was checked all the same
    assert [e["event"] for e in await feed(client, key)] == ["status_change", "permit_approved"]
