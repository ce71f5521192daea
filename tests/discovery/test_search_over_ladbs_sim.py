"""Discovery through the real LADBS adapter, PortalHttp and the LADBS simulator (in-process
ASGI), with the county source still a fake until the EPIC-LA adapter lands."""

from __future__ import annotations

import random
from collections.abc import AsyncIterator
from dataclasses import dataclass
from datetime import date

import httpx
import pytest
from starlette.applications import Starlette

from permitapi.context import AppContext
from permitapi.discovery.merge import distance_mi
from permitapi.portalsim.ladbs import LadbsFamily
from permitapi.portalsim.store import Fault, SimStore
from permitapi.sources.http import PortalHttp
from permitapi.sources.ladbs.adapter import LadbsAdapter
from tests.support.accounts import make_account
from tests.support.fake_sources import FakeSearchSource, hit

URL = "/api/v1/permits/search"


@dataclass
class Wired:
    store: SimStore
    county: FakeSearchSource
    headers: dict[str, str]


@pytest.fixture
async def wired(ctx: AppContext) -> AsyncIterator[Wired]:
    jurisdiction = ctx.directory.get("ladbs")
    assert jurisdiction is not None
    family, store = LadbsFamily(), SimStore()
    for permit in family.generate(jurisdiction, random.Random(5), 300, date(2026, 11, 20)):
        store.put(permit)
    sim = Starlette(routes=family.routes(store, ctx.directory))
    http = PortalHttp(portal_base_url="http://portalsim", transport=httpx.ASGITransport(app=sim))
    ctx.gateway.register("ladbs", LadbsAdapter(http, clock=ctx.clock))
    county = FakeSearchSource("epicla")
    ctx.gateway.register("epicla", county)
    account = await make_account(ctx, "pro", discovery_addon=True)
    yield Wired(store, county, {"X-API-Key": account.live_key})
    await http.aclose()


async def test_parcel_normalisation_reaches_the_city_source(
    client: httpx.AsyncClient, wired: Wired
) -> None:
    permit = next(p for p in wired.store.of("ladbs") if p.parcel and p.issued_date)
    assert permit.parcel is not None
    spaced = f"{permit.parcel[:4]} {permit.parcel[4:7]}-{permit.parcel[7:]}"
    response = await client.get(
        URL,
        params=[("parcel", spaced), ("parcel", permit.parcel), ("city", "Los Angeles")],
        headers=wired.headers,
    )
    assert response.status_code == 200, response.text
    numbers = {r["permit_number"] for r in response.json()["results"]}
    expected = {
        p.permit_number
        for p in wired.store.of("ladbs")
        if p.parcel == permit.parcel and p.latitude is not None
    }
    assert permit.permit_number in numbers
    assert numbers == expected


async def test_radius_search_returns_only_permits_inside_the_circle(
    client: httpx.AsyncClient, wired: Wired
) -> None:
    lat, lon, miles = 34.0522, -118.2437, 3.0
    params = {"lat": lat, "lon": lon, "radius_mi": miles, "limit": 100}
    response = await client.get(URL, params=params, headers=wired.headers)
    assert response.status_code == 200, response.text
    results = response.json()["results"]
    inside = {
        p.permit_number
        for p in wired.store.of("ladbs")
        if p.latitude is not None
        and p.longitude is not None
        and distance_mi(lat, lon, p.latitude, p.longitude) <= miles
    }
    assert results
    assert {r["permit_number"] for r in results} <= inside
    # not yet issued first, then newest issue date first
    dates = [r["issued_date"] or "9999-12-31" for r in results]
    assert dates == sorted(dates, reverse=True)


async def test_city_source_down_keeps_county_results_as_partial(
    client: httpx.AsyncClient, wired: Wired
) -> None:
    wired.county.add(hit("UNC-BLDR261101000001", "epicla", date(2026, 11, 1)), zip="90022")
    wired.store.add_fault(Fault("ladbs", "down"))
    response = await client.get(URL, params={"zip": "90022"}, headers=wired.headers)
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["partial"] is True
    assert [r["jurisdiction"] for r in body["results"]] == ["epicla"]
    assert body["warnings"][0]["source"] == "ladbs"
    assert body["source_freshness"]["ladbs"]["reliability"] == "down"
