"""100 parallel metered requests against an almost-spent meter, spread over two app instances
on one database (two API processes' worth of connections and caches): exactly the remaining
credits are granted, every other request is refused with 429, and the meter ends at its limit.
"""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import AsyncIterator

import httpx
import pytest
from fastapi import FastAPI

from permitapi.account.plans import Meter
from permitapi.app import create_app
from permitapi.config import Settings
from permitapi.context import AppContext
from permitapi.kit.clock import FrozenClock
from permitapi.usage import service as usage
from tests.permit.helpers import keys_for, lookup_credits_used
from tests.support.fake_portal import FakePortal, snapshot

LADBS = "21030-20000-00256"
REMAINING = 10


@pytest.fixture
async def second_client(settings: Settings, clock: FrozenClock) -> AsyncIterator[httpx.AsyncClient]:
    other: FastAPI = create_app(settings, clock=clock)
    async with other.router.lifespan_context(other):
        FakePortal().install(other.state.ctx)
        transport = httpx.ASGITransport(app=other)
        async with httpx.AsyncClient(transport=transport, base_url="http://second") as http:
            yield http


async def test_parallel_requests_never_overspend_an_almost_spent_meter(
    client: httpx.AsyncClient,
    second_client: httpx.AsyncClient,
    ctx: AppContext,
    portal: FakePortal,
) -> None:
    # Enterprise: a burst window (600 a minute) that 100 requests do not reach.
    keys = await keys_for(ctx, "enterprise")
    async with ctx.sessionmaker() as session:
        limit = (
            await usage.meter_state(session, keys.principal, Meter.LOOKUP, ctx.clock.now())
        ).limit
    assert limit is not None
    portal.add(snapshot("ladbs", LADBS))
    # Cache the permit (1 credit), then spend down to REMAINING credits.
    assert (
        await client.get(f"/api/v1/permits/{LADBS}/status", headers=keys.live)
    ).status_code == 200
    async with ctx.transaction() as session:
        await usage.reserve(
            session, keys.principal, Meter.LOOKUP, limit - REMAINING - 1, ctx.clock.now()
        )
    assert await lookup_credits_used(ctx, keys.principal) == limit - REMAINING

    async def one(index: int) -> tuple[str, int]:
        http = client if index % 2 else second_client
        if index % 4 == 0:
            response = await http.post(
                "/api/v1/permits/batch-status", headers=keys.live, json={"permit_numbers": [LADBS]}
            )
            granted = response.status_code == 200 and len(response.json()["results"]) == 1
            return ("batch", 200 if granted else response.status_code)
        response = await http.get(f"/api/v1/permits/{LADBS}/status", headers=keys.live)
        return ("status", response.status_code)

    outcomes = await asyncio.gather(*(one(i) for i in range(100)))
    statuses = Counter(status for _, status in outcomes)
    assert statuses[200] == REMAINING, statuses
    assert statuses[429] == 100 - REMAINING, statuses
    assert await lookup_credits_used(ctx, keys.principal) == limit
    # Both kinds of request raced for the last credits through both instances.
    assert {kind for kind, _ in outcomes} == {"batch", "status"}
