"""Discovery through the real LADBS and EPIC-LA adapters, PortalHttp and the portal simulator
(in-process ASGI), with the app's FrozenClock: what a black-box server cannot show because its
clock cannot be moved from outside (cursor expiry), plus the merged order around permits not
yet issued."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

import httpx
import pytest

from permitapi.context import AppContext
from permitapi.kit.clock import FrozenClock
from permitapi.portalsim.app import create_sim_app
from permitapi.portalsim.store import SimStore
from permitapi.sources.epicla.adapter import EpicLaAdapter
from permitapi.sources.families import SIMULATORS
from permitapi.sources.http import PortalHttp
from permitapi.sources.ladbs.adapter import LadbsAdapter
from tests.support.accounts import make_account
from tests.support.problems import assert_problem

URL = "/api/v1/permits/search"


@dataclass
class Wired:
    store: SimStore
    headers: dict[str, str]


@pytest.fixture
async def wired(ctx: AppContext, clock: FrozenClock) -> AsyncIterator[Wired]:
    sim = create_sim_app(
        ctx.directory,
        permits_per_jurisdiction={"ladbs": 120, "epicla": 120},
        latency_ms=0,
        today=clock.now().date(),
        families={name: SIMULATORS[name] for name in ("ladbs", "epicla")},
    )
    http = PortalHttp(portal_base_url="http://portalsim", transport=httpx.ASGITransport(app=sim))
    ctx.gateway.register("ladbs", LadbsAdapter(http, clock=clock))
    ctx.gateway.register("epicla", EpicLaAdapter(http, clock=clock))
    account = await make_account(ctx, "pro", discovery_addon=True)
    yield Wired(sim.state.store, {"X-API-Key": account.live_key})
    await http.aclose()


async def test_cursor_expires_fifteen_minutes_after_its_page(
    client: httpx.AsyncClient, wired: Wired, clock: FrozenClock
) -> None:
    # Start 16 minutes early, so every source read (recorded in the shared database by source
    # health) happens before the fixture's "now", which other tests compare against.
    clock.advance(-timedelta(minutes=16))
    params: dict[str, Any] = {"permit_type": "Building", "limit": 5}
    first = await client.get(URL, params=params, headers=wired.headers)
    assert first.status_code == 200, first.text
    token = first.json()["pagination"]["next_cursor"]
    clock.advance(timedelta(minutes=15))
    ok = await client.get(URL, params={**params, "cursor": token}, headers=wired.headers)
    assert ok.status_code == 200, ok.text
    clock.advance(timedelta(seconds=1))
    usage = await client.get("/api/v1/usage", headers=wired.headers)
    expired = await client.get(URL, params={**params, "cursor": token}, headers=wired.headers)
    problem = assert_problem(expired, 400, "invalid_cursor")
    assert "expired" in str(problem["detail"])
    after = await client.get("/api/v1/usage", headers=wired.headers)
    assert after.json()["discovery"] == usage.json()["discovery"]  # refused: no charge
    # the page that followed it carries its own, fresh cursor
    fresh = ok.json()["pagination"]["next_cursor"]
    again = await client.get(URL, params={**params, "cursor": fresh}, headers=wired.headers)
    assert again.status_code == 200, again.text


async def test_permits_not_yet_issued_follow_every_issued_one_across_sources(
    client: httpx.AsyncClient, wired: Wired
) -> None:
    for slug in ("ladbs", "epicla"):
        assert any(p.issued_date is None for p in wired.store.of(slug))
    results: list[dict[str, Any]] = []
    cursor = None
    while True:
        params: dict[str, Any] = {"value_min": 0, "limit": 30}
        if cursor:
            params["cursor"] = cursor
        page = await client.get(URL, params=params, headers=wired.headers)
        assert page.status_code == 200, page.text
        results.extend(page.json()["results"])
        cursor = page.json()["pagination"]["next_cursor"]
        if cursor is None:
            break
    keys = [(r["issued_date"] is None, r["issued_date"] or "") for r in results]
    # issued newest first, then the unissued ones of both sources
    assert [k[0] for k in keys] == sorted(k[0] for k in keys)
    dated = [k[1] for k in keys if not k[0]]
    assert dated == sorted(dated, reverse=True)
    undated = {r["jurisdiction"] for r in results if r["issued_date"] is None}
    assert undated == {"ladbs", "epicla"}
    assert len({(r["jurisdiction"], r["permit_number"]) for r in results}) == len(results)
