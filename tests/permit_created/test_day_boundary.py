"""Dates at the sources' day boundary: between midnight UTC and midnight in Los Angeles, a permit
issued "today" is stamped with the Los Angeles date by the simulator's LA portals (as the real
ones do), and the permit_created monitor announces it; a source that stamps a later day than
ours (the UTC date) is still read, since the monitor's window has no upper bound."""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta

import httpx
import pytest

from permitapi.context import AppContext
from permitapi.kit.clock import FrozenClock
from permitapi.permit_created.jobs import PermitCreatedMonitor
from permitapi.portalsim.app import create_sim_app
from permitapi.sources.epicla.adapter import EpicLaAdapter
from permitapi.sources.families import SIMULATORS
from permitapi.sources.http import PortalHttp
from permitapi.sources.ladbs.adapter import LadbsAdapter
from tests.permit_created.test_monitor import subscribed
from tests.saved_search.conftest import add_city, city_number, feed, today
from tests.support.fake_sources import FakeSearchSource
from tests.support.portal_sim import SimControl
from tests.support.receiver import Receiver

# 03:30 UTC on 23 November is 19:30 on 22 November in Los Angeles (PST).
BETWEEN_MIDNIGHTS = datetime(2026, 11, 23, 3, 30, tzinfo=UTC)


@pytest.fixture
async def la_sim(ctx: AppContext, clock: FrozenClock) -> AsyncIterator[SimControl]:
    """The real LADBS and EPIC-LA adapters over the simulator, both on the test's clock."""
    clock.set(BETWEEN_MIDNIGHTS)
    sim = create_sim_app(
        ctx.directory,
        permits_per_jurisdiction={"ladbs": 40, "epicla": 40},
        latency_ms=0,
        families={name: SIMULATORS[name] for name in ("ladbs", "epicla")},
        clock=clock.now,
    )
    transport = httpx.ASGITransport(app=sim)
    http = PortalHttp(portal_base_url="http://portalsim", transport=transport)
    ctx.gateway.register("ladbs", LadbsAdapter(http, clock=clock))
    ctx.gateway.register("epicla", EpicLaAdapter(http, clock=clock))
    async with httpx.AsyncClient(transport=transport, base_url="http://portalsim") as control:
        yield SimControl(control)
    await http.aclose()


async def test_a_permit_issued_between_the_two_midnights_is_announced(
    client: httpx.AsyncClient, ctx: AppContext, la_sim: SimControl, receiver: Receiver
) -> None:
    key = await subscribed(client, ctx, receiver)
    assert await PermitCreatedMonitor().run_due(ctx) > 0  # the silent baseline
    assert await feed(client, key) == []

    number = "26019-90000-77777"
    created = await la_sim.put("ladbs", number)
    assert created["issued_date"] == "2026-11-22"  # Los Angeles' date, not UTC's 23rd
    assert today(ctx).isoformat() == "2026-11-22"

    assert await PermitCreatedMonitor(force=True).run_due(ctx) > 0
    [event] = await feed(client, key)
    assert (event["event"], event["permit_number"]) == ("permit_created", number)
    assert event["data"]["permit"]["issued_date"] == "2026-11-22"


async def test_a_source_stamping_a_later_day_is_still_read(
    client: httpx.AsyncClient,
    ctx: AppContext,
    clock: FrozenClock,
    sources: dict[str, FakeSearchSource],
    receiver: Receiver,
) -> None:
    clock.set(BETWEEN_MIDNIGHTS)
    key = await subscribed(client, ctx, receiver)
    add_city(sources, city_number(1), today(ctx))
    assert await PermitCreatedMonitor().run_due(ctx) == 1  # the silent baseline
    # A source stamping in UTC: issued "today", dated the 23rd while Los Angeles is on the 22nd.
    utc_stamped = add_city(sources, city_number(2), today(ctx) + timedelta(days=1))
    assert await PermitCreatedMonitor(force=True).run_due(ctx) == 2
    [event] = await feed(client, key)
    assert event["permit_number"] == utc_stamped
