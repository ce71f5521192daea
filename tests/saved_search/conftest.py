"""Saved-search tests: the app in process with fake discovery sources plugged into the source
gateway (tests/support/fake_sources.py), a real receiver on loopback, and the real daily job.

The database is shared by the session, so each test starts without saved searches, observed
identities or daily-pass leases, and with no webhook of an earlier test left active (their
receivers are gone)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import date, timedelta
from typing import Any

import httpx
import pytest
from fastapi import FastAPI
from sqlalchemy import text

from permitapi.account import repository as account_repository
from permitapi.context import AppContext
from permitapi.discovery import search as search_module
from permitapi.portalsim.app import create_sim_app
from permitapi.portalsim.store import SimStore
from permitapi.sources.epicla.adapter import EpicLaAdapter
from permitapi.sources.families import SIMULATORS
from permitapi.sources.http import PortalHttp
from permitapi.sources.ladbs.adapter import LadbsAdapter
from tests.support.fake_sources import FakeSearchSource, hit
from tests.webhook.conftest import Key, clock, new_key, receiver, settings  # noqa: F401

URL = "/api/v1/saved-searches"
CLEANUP = (
    "DELETE FROM saved_search_identities",
    "DELETE FROM saved_searches",
    "DELETE FROM permit_created_identities",
    "DELETE FROM job_leases WHERE name IN ('saved-searches', 'permit-created')",
    "UPDATE webhook_deliveries SET status = 'dead' WHERE status = 'pending'",
    "UPDATE webhooks SET is_active = false WHERE is_active = true",
)


@pytest.fixture
async def ctx(app: FastAPI) -> AppContext:
    context: AppContext = app.state.ctx
    async with context.transaction() as session:
        for statement in CLEANUP:
            await session.execute(text(statement))
    return context


@pytest.fixture(autouse=True)
def no_retry_pauses(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(search_module, "BROAD_COUNTY_RETRY_DELAYS", (0.0, 0.0))


@pytest.fixture
def sources(ctx: AppContext) -> dict[str, FakeSearchSource]:
    fakes = {"ladbs": FakeSearchSource("ladbs"), "epicla": FakeSearchSource("epicla")}
    for family, fake in fakes.items():
        ctx.gateway.register(family, fake)
    return fakes


@pytest.fixture
async def simulator(ctx: AppContext) -> AsyncIterator[SimStore]:
    """The real LADBS and EPIC-LA adapters over the portal simulator (in-process ASGI); the
    returned store is the simulator's ground truth, changed directly by the test."""
    sim = create_sim_app(
        ctx.directory,
        permits_per_jurisdiction={"ladbs": 120, "epicla": 120},
        latency_ms=0,
        today=today(ctx),
        families={name: SIMULATORS[name] for name in ("ladbs", "epicla")},
    )
    http = PortalHttp(portal_base_url="http://portalsim", transport=httpx.ASGITransport(app=sim))
    ctx.gateway.register("ladbs", LadbsAdapter(http, clock=ctx.clock))
    ctx.gateway.register("epicla", EpicLaAdapter(http, clock=ctx.clock))
    yield sim.state.store
    await http.aclose()


def today(ctx: AppContext) -> date:
    """The sources' calendar day (Los Angeles)."""
    from permitapi.discovery.search import source_today

    jurisdiction = ctx.directory.get("ladbs")
    assert jurisdiction is not None
    return source_today(jurisdiction, ctx.clock.now())


def add_city(
    fakes: dict[str, FakeSearchSource],
    number: str,
    issued: date | None,
    permit_type: str = "Electrical",
    **extra: Any,
) -> str:
    fakes["ladbs"].add(hit(number, "ladbs", issued, permit_type=permit_type, **extra))
    return number


def add_county(
    fakes: dict[str, FakeSearchSource],
    number: str,
    issued: date | None,
    permit_type: str = "Electrical",
    **extra: Any,
) -> str:
    fakes["epicla"].add(hit(number, "epicla", issued, permit_type=permit_type, **extra))
    return number


def city_number(i: int) -> str:
    return f"26016-10000-{i:05d}"


async def create(
    client: httpx.AsyncClient,
    key: Key,
    criteria: dict[str, Any] | None = None,
    name: str = "Electrical in LA",
) -> dict[str, Any]:
    response = await client.post(
        URL,
        json={"name": name, "criteria": criteria or {"city": "Los Angeles",
                                                     "permit_type": "Electrical"}},
        headers=key.headers,
    )  # fmt: skip
    assert response.status_code == 201, response.text
    body: dict[str, Any] = response.json()
    return body


async def read(client: httpx.AsyncClient, key: Key, saved_search_id: str) -> dict[str, Any]:
    response = await client.get(f"{URL}/{saved_search_id}", headers=key.headers)
    assert response.status_code == 200, response.text
    body: dict[str, Any] = response.json()
    return body


async def feed(client: httpx.AsyncClient, key: Key) -> list[dict[str, Any]]:
    response = await client.get("/api/v1/events", params={"limit": 200}, headers=key.headers)
    assert response.status_code == 200, response.text
    found: list[dict[str, Any]] = response.json()["events"]
    return found


async def usage(client: httpx.AsyncClient, key: Key) -> dict[str, Any]:
    response = await client.get("/api/v1/usage", headers=key.headers)
    assert response.status_code == 200, response.text
    body: dict[str, Any] = response.json()
    return {meter: body[meter]["used"] for meter in ("lookup", "discovery")}


async def set_addon(ctx: AppContext, key: Key, enabled: bool) -> None:
    async with ctx.transaction() as session:
        account_id = (
            await session.execute(
                text("SELECT account_id FROM api_keys WHERE id = :id"), {"id": key.api_key_id}
            )
        ).scalar_one()
        await account_repository.set_flags(session, account_id, discovery_addon=enabled)


def next_day(ctx: AppContext) -> None:
    ctx.clock.advance(timedelta(days=1))  # type: ignore[attr-defined]


__all__ = ["Key", "new_key"]
