"""Status lookups of a browser-backed jurisdiction end to end: the API answers 202, the worker's
operation reads the record in headless Chromium when the simulator serves it script-only, and
over plain HTTP when it does not. The simulator runs in process behind the real PortalHttp."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass
from datetime import date
from typing import Any

import httpx
import pytest
from starlette.applications import Starlette

from permitapi.composition import job_sources
from permitapi.context import AppContext
from permitapi.portalsim.app import create_sim_app
from permitapi.portalsim.store import SimStore
from permitapi.sources.base import PermitSnapshot
from permitapi.sources.browser.engine import BrowserEngine
from permitapi.sources.browser.reader import PageReader
from permitapi.sources.families import SIMULATORS
from permitapi.sources.gateway import SourceGateway
from permitapi.worker.runner import Worker
from tests.support.accounts import make_account
from tests.support.portal_http import in_process_http

SLUG = "aca:sandiego"


@dataclass
class Portal:
    sim: Starlette
    engine: BrowserEngine

    @property
    def store(self) -> SimStore:
        found: SimStore = self.sim.state.store
        return found

    def script_only(self, on: bool) -> None:
        modes = self.sim.state.page_modes.script_only
        modes.add(SLUG) if on else modes.discard(SLUG)


@pytest.fixture
async def portal(ctx: AppContext) -> AsyncIterator[Portal]:
    sim = create_sim_app(
        permits_per_jurisdiction=20,
        latency_ms=0,
        today=date(2026, 11, 22),
        families={"aca": SIMULATORS["aca"]},
    )
    http = in_process_http(sim, "http://portalsim.test")
    engine = BrowserEngine(http, pool_size=2, page_timeout=20.0)
    original = ctx.gateway
    ctx.gateway = SourceGateway(http, original.recorder, pages=PageReader(engine))
    try:
        yield Portal(sim, engine)
    finally:
        ctx.gateway = original
        await engine.aclose()
        await http.aclose()


async def _lookup(
    client: httpx.AsyncClient, ctx: AppContext, key: str, number: str
) -> dict[str, Any]:
    accepted = await client.get(
        f"/api/v1/permits/{number}/status",
        params={"jurisdiction": SLUG},
        headers={"X-API-Key": key},
    )
    assert accepted.status_code == 202, accepted.text
    assert accepted.headers["Location"] == accepted.json()["poll_url"]
    assert await Worker(ctx, job_sources()).run_once() >= 1
    done = await client.get(accepted.json()["poll_url"], headers={"X-API-Key": key})
    body: dict[str, Any] = done.json()
    assert body["status"] == "succeeded", body
    result: dict[str, Any] = body["result"]
    return result


def _candidate(store: SimStore, skip: set[str]) -> PermitSnapshot:
    return next(
        p for p in store.of(SLUG) if p.inspections and p.issued_date and p.permit_number not in skip
    )


async def _assert_record(
    client: httpx.AsyncClient,
    key: str,
    result: dict[str, Any],
    truth: PermitSnapshot,
) -> None:
    """The operation's record, then the stored permit's dates and inspections (now cached)."""
    headers = {"X-API-Key": key}
    assert result["permit_number"] == truth.permit_number
    assert result["source"] == "live_scrape"
    assert result["portal_status"] == truth.raw_status
    assert result["address"] == truth.address
    permit = (await client.get(f"/api/v1/permits/{result['permit_id']}", headers=headers)).json()
    text = str(permit)
    for day in (truth.applied_date, truth.issued_date):
        assert day is not None
        assert day.isoformat() in text, (day, permit)
    inspections = await client.get(
        f"/api/v1/permits/{truth.permit_number}/inspections",
        params={"jurisdiction": SLUG},
        headers=headers,
    )
    assert inspections.status_code == 200, inspections.text
    listed = str(inspections.json())
    for inspection in truth.inspections or []:
        assert inspection.type in listed
        assert inspection.date is None or inspection.date.isoformat() in listed


async def test_script_only_lookup_is_202_and_completes_in_the_browser_plain_stays_on_http(
    client: httpx.AsyncClient, ctx: AppContext, portal: Portal
) -> None:
    key = (await make_account(ctx, "pro")).live_key
    plain = _candidate(portal.store, set())
    await _assert_record(client, key, await _lookup(client, ctx, key, plain.permit_number), plain)
    assert portal.engine.pages_read == 0  # plain pages: HTTP read the record

    portal.script_only(True)
    scripted = _candidate(portal.store, {plain.permit_number})
    result = await _lookup(client, ctx, key, scripted.permit_number)
    await _assert_record(client, key, result, scripted)
    assert portal.engine.pages_read == 1

    status = (await client.get("/developers/status.json")).json()
    health = next(j for j in status["jurisdictions"] if j["slug"] == SLUG)
    assert health["status"] == "operational"
    assert health["sample_size"] == 2  # both fetches recorded for source health
