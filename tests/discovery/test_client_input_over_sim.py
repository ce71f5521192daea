"""Client input is never blamed on a portal: over the real LADBS and EPIC-LA adapters and the
portal simulator, numbers reach the portals without exponents, dates outside the documented
range and numbers that are not plain decimals are 400 before any portal request (and without
a charge), full-width digits are read as ASCII, and none of it moves source health."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from datetime import date
from typing import Any

import httpx
import pytest
from fastapi import FastAPI
from sqlalchemy import text

from permitapi.account import service as accounts
from permitapi.context import AppContext
from permitapi.discovery import cursor
from permitapi.discovery.filters import parse_search
from permitapi.kit.clock import FrozenClock
from permitapi.portalsim.app import create_sim_app
from permitapi.sources.base import QueryNotBuilt, SearchCriteria
from permitapi.sources.epicla.adapter import EpicLaAdapter
from permitapi.sources.families import SIMULATORS
from permitapi.sources.http import PortalHttp
from permitapi.sources.ladbs.adapter import LadbsAdapter
from permitapi.telemetry.metrics import QUERY_DEFECTS
from tests.conftest import TEST_SECRET
from tests.support.accounts import make_account
from tests.support.problems import assert_problem

URL = "/api/v1/permits/search"
FULL_WIDTH_ZIP = "\uff19\uff10\uff10\uff11\uff12"  # 90012 in full-width digits
# (query, status): each was a 503 source_inconclusive counted as a portal failure, or a 200
# that read `1_000` as 1000.
CASES: list[tuple[dict[str, Any], int, str | None]] = [
    ({"value_min": "0.00001"}, 200, None),
    ({"lat": "0.00001", "lon": "-118.25", "radius_mi": "1"}, 200, None),
    ({"value_max": "0.00001", "city": "Los Angeles"}, 200, None),
    ({"date_to": "9999-12-31"}, 400, "invalid_date_range"),
    ({"date_from": "1899-12-31"}, 400, "invalid_date_range"),
    ({"date_from": "2101-01-01", "city": "Los Angeles"}, 400, "invalid_date_range"),
    ({"value_min": "1_000"}, 400, "invalid_value_min"),
    ({"value_max": "inf"}, 400, "invalid_value_max"),
    ({"value_min": "nan"}, 400, "invalid_value_min"),
    ({"value_min": "1e3"}, 400, "invalid_value_min"),
    ({"value_min": "1" + "0" * 30}, 400, "invalid_value_min"),
    ({"lat": "3_4", "lon": "-118.25", "radius_mi": "1"}, 400, "invalid_lat"),
    ({"zip": "\u0669\u0660\u0660\u0661\u0662"}, 400, "invalid_zip"),  # Arabic-Indic digits
    ({"zip": FULL_WIDTH_ZIP}, 200, None),
    ({"value_min": "\uff11\uff10\uff10"}, 200, None),  # full-width 100
]


@pytest.fixture
async def wired(ctx: AppContext, clock: FrozenClock) -> AsyncIterator[dict[str, str]]:
    sim = create_sim_app(
        ctx.directory,
        permits_per_jurisdiction={"ladbs": 60, "epicla": 60},
        latency_ms=0,
        today=clock.now().date(),
        families={name: SIMULATORS[name] for name in ("ladbs", "epicla")},
    )
    http = PortalHttp(portal_base_url="http://portalsim", transport=httpx.ASGITransport(app=sim))
    ctx.gateway.register("ladbs", LadbsAdapter(http, clock=clock))
    ctx.gateway.register("epicla", EpicLaAdapter(http, clock=clock))
    # The database is shared by the session: only this test's outcomes are judged.
    async with ctx.transaction() as session:
        await session.execute(text("DELETE FROM source_fetches"))
    account = await make_account(ctx, "pro", discovery_addon=True)
    yield {"X-API-Key": account.live_key}
    await http.aclose()


async def status_of(client: httpx.AsyncClient, slug: str) -> dict[str, Any]:
    response = await client.get("/developers/status.json")
    assert response.status_code == 200, response.text
    found: dict[str, Any] = next(
        item for item in response.json()["jurisdictions"] if item["slug"] == slug
    )
    return found


async def discovery_used(client: httpx.AsyncClient, headers: dict[str, str]) -> int:
    response = await client.get("/api/v1/usage", headers=headers)
    assert response.status_code == 200, response.text
    used: int = response.json()["discovery"]["used"]
    return used


async def test_thirty_bad_inputs_leave_the_portals_up(
    client: httpx.AsyncClient, wired: dict[str, str]
) -> None:
    for index in range(30):
        params, status, code = CASES[index % len(CASES)]
        before = await discovery_used(client, wired)
        response = await client.get(URL, params=params, headers=wired)
        if code is not None:
            problem = assert_problem(response, status, code)
            assert await discovery_used(client, wired) == before, problem  # no charge
        else:
            assert response.status_code == status, (params, response.text)
            assert response.json()["partial"] is False, response.text
    for slug in ("ladbs", "epicla"):
        health = await status_of(client, slug)
        assert health["status"] == "operational", health
        assert health["consecutive_failures"] == 0, health
        assert health["circuit_state"] == "closed", health
        assert health["sample_size"] > 0, health


async def test_small_numbers_and_full_width_digits_select_what_their_ascii_form_selects(
    client: httpx.AsyncClient, wired: dict[str, str]
) -> None:
    async def numbers(params: dict[str, str]) -> list[str]:
        response = await client.get(URL, params={**params, "limit": "100"}, headers=wired)
        assert response.status_code == 200, response.text
        return [hit["permit_number"] for hit in response.json()["results"]]

    # Valuations are whole dollars or cents: 0.00001 selects what 0.005 selects.
    tiny = await numbers({"value_min": "0.00001"})
    assert tiny == await numbers({"value_min": "0.005"})
    assert tiny != await numbers({"value_min": "0"})
    assert await numbers({"value_min": "\uff11\uff10\uff10"}) == await numbers({"value_min": "100"})
    assert await numbers({"zip": FULL_WIDTH_ZIP}) == await numbers({"zip": "90012"})


async def test_saved_search_criteria_outside_the_date_range_are_refused(
    client: httpx.AsyncClient, wired: dict[str, str]
) -> None:
    for criteria, code in (
        ({"city": "Los Angeles", "date_to": "9999-12-31"}, "invalid_date_range"),
        ({"city": "Los Angeles", "date_from": "1000-01-01"}, "invalid_date_range"),
        ({"city": "Los Angeles", "value_min": "1_000"}, "invalid_value_min"),
        ({"city": "Los Angeles", "value_min": 1e400}, "invalid_value_min"),
    ):
        response = await client.post(
            "/api/v1/saved-searches",
            content=_json({"name": "Out of range", "criteria": criteria}),
            headers={**wired, "content-type": "application/json"},
        )
        problem = assert_problem(response, 400, code)
        assert str(problem["parameter"]).startswith("criteria.")
    small = await client.post(
        "/api/v1/saved-searches",
        json={"name": "Tiny", "criteria": {"city": "Los Angeles", "value_min": 0.00001}},
        headers=wired,
    )
    assert small.status_code == 201, small.text
    assert small.json()["criteria"]["value_min"] == 0.00001


def _json(body: dict[str, Any]) -> bytes:
    # `1e400` is what a client may send; Python's json reads it as infinity.
    return json.dumps(body).replace("Infinity", "1e400").encode()


async def test_a_query_that_cannot_be_built_is_our_defect_not_the_portals(
    app: FastAPI, ctx: AppContext, client: httpx.AsyncClient, wired: dict[str, str]
) -> None:
    """Criteria the filters would refuse, given to the gateway directly: the builder's failure
    is counted as a defect and never recorded as a portal outcome."""
    ladbs = ctx.directory.get("ladbs")
    assert ladbs is not None
    before = QUERY_DEFECTS.labels("ladbs")._value.get()
    for _ in range(5):
        with pytest.raises(QueryNotBuilt):
            await ctx.gateway.search(ladbs, SearchCriteria(date_to=date.max, limit=10))
    assert QUERY_DEFECTS.labels("ladbs")._value.get() == before + 5
    health = await status_of(client, "ladbs")
    assert health["status"] == "operational", health
    assert health["sample_size"] == 0, health


async def test_forged_discovery_cursors_are_400_without_a_portal_request(
    client: httpx.AsyncClient, ctx: AppContext, wired: dict[str, str]
) -> None:
    """Signed with the service secret and bound correctly, as by an attacker who learned the
    secret: offsets out of range are refused before any source is read or a credit used."""
    principal_id = await _key_id(ctx, wired["X-API-Key"])
    items = [("permit_type", "Building"), ("limit", "5")]
    query = parse_search(items)
    now = ctx.clock.now()
    ok = cursor.encode(
        TEST_SECRET, query, principal_id, cursor.Position({"ladbs": 0, "epicla": 0}), now
    )
    assert (
        await client.get(URL, params=[*items, ("cursor", ok)], headers=wired)
    ).status_code == 200
    before = await discovery_used(client, wired)
    async with ctx.transaction() as session:
        await session.execute(text("DELETE FROM source_fetches"))
    for offsets in (
        {"ladbs": 2**63 - 1, "epicla": 0},
        {"ladbs": 0, "epicla": cursor.MAX_OFFSET + 1},
        {"ladbs": -1, "epicla": None},
        {"ladbs": True, "epicla": 0},
        {"ladbs": 1.5, "epicla": 0},
    ):
        forged = cursor.encode(TEST_SECRET, query, principal_id, cursor.Position(offsets), now)
        response = await client.get(URL, params=[*items, ("cursor", forged)], headers=wired)
        assert_problem(response, 400, "invalid_cursor")
    assert await discovery_used(client, wired) == before
    assert (await status_of(client, "ladbs"))["sample_size"] == 0  # no portal was asked


async def _key_id(ctx: AppContext, raw_key: str) -> str:
    async with ctx.sessionmaker() as session:
        principal = await accounts.resolve_key(session, raw_key)
    assert principal is not None
    return principal.api_key_id
