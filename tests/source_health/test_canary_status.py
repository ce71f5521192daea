"""The worker's daily drift canary pass: its verdict per jurisdiction on /developers/status.json,
naming the field that drifted, without counting in the health aggregates; off unless the
deployment turns it on."""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import date
from typing import Any

import httpx
import pytest
from sqlalchemy import text
from starlette.applications import Starlette

from permitapi.context import AppContext
from permitapi.portalsim.app import create_sim_app
from permitapi.source_health.jobs import CanaryPass
from permitapi.sources.canary.check import load_records
from permitapi.sources.gateway import SourceGateway
from tests.support.canary import seed_canary_records
from tests.support.portal_http import in_process_http


@pytest.fixture
async def sim(ctx: AppContext) -> AsyncIterator[Starlette]:
    app = create_sim_app(permits_per_jurisdiction=3, latency_ms=0, today=date(2026, 11, 22))
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://sim") as control:
        await seed_canary_records(control)
    http = in_process_http(app, "http://portalsim.test")
    original = ctx.gateway
    ctx.gateway = SourceGateway(http, original.recorder)
    async with ctx.transaction() as session:
        await session.execute(text("DELETE FROM source_fetches"))
        await session.execute(text("DELETE FROM job_leases WHERE name = 'sources-canary'"))
    try:
        yield app
    finally:
        ctx.gateway = original
        await http.aclose()
        async with ctx.transaction() as session:
            await session.execute(text("DELETE FROM source_fetches"))


async def jurisdictions(client: httpx.AsyncClient) -> dict[str, dict[str, Any]]:
    response = await client.get("/developers/status.json")
    assert response.status_code == 200, response.text
    return {item["slug"]: item for item in response.json()["jurisdictions"]}


async def test_daily_canary_verdicts_appear_on_the_status_page(
    client: httpx.AsyncClient, ctx: AppContext, sim: Starlette
) -> None:
    before = await jurisdictions(client)
    assert before["ladbs"]["canary"] is None

    assert await CanaryPass(force=True).run_due(ctx) == len(load_records())
    after = await jurisdictions(client)
    for slug in ("ladbs", "epicla", "aca:kingco"):
        assert after[slug]["canary"]["outcome"] == "ok", after[slug]
        assert after[slug]["canary"]["detail"] is None
        assert after[slug]["status"] == "operational"
    assert after["aca:sandiego"]["canary"] is None  # no canary record there

    transport = httpx.ASGITransport(app=sim)
    async with httpx.AsyncClient(transport=transport, base_url="http://sim") as control:
        response = await control.post(
            "/_control/page-modes",
            json={"source": "epicla", "drift": [{"kind": "drop_column", "target": "APPLY_DATE"}]},
        )
    assert response.status_code == 200, response.text
    assert await CanaryPass(force=True).run_due(ctx) == len(load_records())
    drifted = await jurisdictions(client)
    assert drifted["epicla"]["canary"]["outcome"] == "drift"
    assert "missing applied_date" in drifted["epicla"]["canary"]["detail"]
    assert drifted["ladbs"]["canary"]["outcome"] == "ok"
    # The verdicts are beside the health, not in it: two lookups' worth of fetches, both fine.
    assert drifted["epicla"]["sample_size"] == 2
    assert drifted["epicla"]["status"] == "operational"


async def test_the_daily_pass_is_off_unless_the_deployment_turns_it_on(
    client: httpx.AsyncClient, ctx: AppContext, sim: Starlette
) -> None:
    assert ctx.settings.canary_daily is False
    assert await CanaryPass().run_due(ctx) == 0
    assert (await jurisdictions(client))["ladbs"]["canary"] is None
    ctx.settings = ctx.settings.model_copy(update={"canary_daily": True})
    try:
        assert await CanaryPass().run_due(ctx) == len(load_records())
        assert await CanaryPass().run_due(ctx) == 0  # done for today
    finally:
        ctx.settings = ctx.settings.model_copy(update={"canary_daily": False})
    assert (await jurisdictions(client))["ladbs"]["canary"]["outcome"] == "ok"
