"""GET /api/v1/permits/search through the app (ASGI) on both databases, with fake sources.

The sources are fakes of the adapters (tests/support/fake_sources.py); everything else is
real: auth, the discovery meter, cursors, problems. Only states the simulator cannot produce
on demand stay here (cut-short reads, scripted retry sequences, accrued overage, a free key
past its burst); every other rule is shown over the real adapters and simulator in
tests/acceptance/test_discovery_dev_server.py and tests/discovery/test_search_over_sim.py.
"""

from __future__ import annotations

from datetime import date, timedelta
from typing import Any

import httpx
import pytest

from permitapi.account import service as accounts
from permitapi.account.plans import Meter
from permitapi.context import AppContext
from permitapi.discovery import search as search_module
from permitapi.sources.base import Blocked, RetryLater
from permitapi.usage import service as usage
from tests.support.accounts import make_account
from tests.support.fake_sources import FakeSearchSource, hit
from tests.support.problems import assert_problem

URL = "/api/v1/permits/search"
DOWNTOWN = (34.0522, -118.2437)


@pytest.fixture(autouse=True)
def no_retry_pauses(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(search_module, "BROAD_COUNTY_RETRY_DELAYS", (0.0, 0.0))


@pytest.fixture
def sources(ctx: AppContext) -> dict[str, FakeSearchSource]:
    fakes = {"ladbs": FakeSearchSource("ladbs"), "epicla": FakeSearchSource("epicla")}
    for family, fake in fakes.items():
        ctx.gateway.register(family, fake)
    return fakes


def seed(fakes: dict[str, FakeSearchSource]) -> None:
    """10 city and 7 county permits, Nov 2026, some sharing issue dates across sources."""
    for i in range(10):
        fakes["ladbs"].add(
            hit(f"26010-10000-{i:05d}", "ladbs", date(2026, 11, 20) - timedelta(days=i)),
            parcel="5432012019",
            zip="90012",
        )
    for i in range(7):
        fakes["epicla"].add(
            hit(f"UNC-BLDR2611{i:02d}000001", "epicla", date(2026, 11, 20) - timedelta(days=2 * i)),
            parcel="5432012019",
            zip="90012",
        )


async def key(ctx: AppContext, plan: str = "developer", **flags: Any) -> dict[str, str]:
    account = await make_account(ctx, plan, discovery_addon=flags.pop("addon", True), **flags)
    return {"X-API-Key": account.live_key}


async def used(client: httpx.AsyncClient, headers: dict[str, str]) -> int:
    response = await client.get("/api/v1/usage", headers=headers)
    return int(response.json()["discovery"]["used"])


async def test_scope_selects_one_source_and_parcels_reach_it_normalised(
    client: httpx.AsyncClient, ctx: AppContext, sources: dict[str, FakeSearchSource]
) -> None:
    seed(sources)
    headers = await key(ctx)
    response = await client.get(
        URL,
        params=[
            ("city", "los angeles"),
            ("parcel", "5432 012 019"),
            ("parcel", "5432-012-019"),
            ("parcel", "1234567890"),
        ],
        headers=headers,
    )
    assert response.status_code == 200
    body = response.json()
    assert {r["jurisdiction"] for r in body["results"]} == {"ladbs"}
    assert set(body["source_freshness"]) == {"ladbs"}
    assert sources["epicla"].calls == []
    assert sources["ladbs"].calls[0].parcels == ("1234567890", "5432012019")


async def test_incomplete_read_is_partial(
    client: httpx.AsyncClient, ctx: AppContext, sources: dict[str, FakeSearchSource]
) -> None:
    seed(sources)
    sources["ladbs"].script = ["incomplete"]
    response = await client.get(URL, params={"zip": "90012"}, headers=await key(ctx))
    body = response.json()
    assert response.status_code == 200
    assert body["partial"] is True
    codes = {(w["source"], w["code"]) for w in body["warnings"]}
    assert {("ladbs", "source_incomplete"), ("ladbs", "source_notice")} <= codes
    assert body["source_freshness"]["ladbs"]["reliability"] == "degraded"


async def test_both_sources_down_is_503(
    client: httpx.AsyncClient, ctx: AppContext, sources: dict[str, FakeSearchSource]
) -> None:
    seed(sources)
    sources["ladbs"].fail_always = Blocked("ladbs", "captcha")
    sources["epicla"].fail_always = RetryLater("epicla", "down", reason="down", retry_after=120)
    headers = await key(ctx)
    response = await client.get(URL, params={"zip": "90012"}, headers=headers)
    assert_problem(response, 503, "source_inconclusive")
    assert response.headers["retry-after"] == "120"
    assert await used(client, headers) == 0


async def test_broad_county_search_is_retried_before_inconclusive(
    client: httpx.AsyncClient, ctx: AppContext, sources: dict[str, FakeSearchSource]
) -> None:
    seed(sources)
    sources["epicla"].script = ["empty", RetryLater("epicla", "slow", reason="timeout")]
    headers = await key(ctx)
    params = {"jurisdiction": "epicla", "date_from": "2026-11-01", "date_to": "2026-11-30"}
    response = await client.get(URL, params=params, headers=headers)
    assert response.status_code == 200
    assert response.json()["result_count"] == 7
    assert len(sources["epicla"].calls) == 3

    # retries are bounded: three failures in a row are inconclusive
    sources["epicla"].calls.clear()
    sources["epicla"].fail_always = RetryLater("epicla", "slow", reason="timeout")
    response = await client.get(URL, params=params, headers=headers)
    assert_problem(response, 503, "source_inconclusive")
    assert len(sources["epicla"].calls) == 3
    assert await used(client, headers) == 1


async def test_a_scope_alone_searches_that_source_newest_first(
    client: httpx.AsyncClient, ctx: AppContext, sources: dict[str, FakeSearchSource]
) -> None:
    seed(sources)
    headers = await key(ctx)
    response = await client.get(URL, params={"city": "Los Angeles", "limit": 4}, headers=headers)
    assert response.status_code == 200, response.text
    body = response.json()
    assert [r["permit_number"] for r in body["results"]] == [
        f"26010-10000-{i:05d}" for i in range(4)
    ]
    assert body["pagination"]["has_more"] is True
    assert set(body["source_freshness"]) == {"ladbs"}
    assert sources["epicla"].calls == []
    call = sources["ladbs"].calls[0]
    assert (call.parcels, call.zip, call.permit_type, call.date_from, call.status) == (
        (), None, None, None, None,
    )  # fmt: skip
    page = await client.get(
        URL,
        params={"city": "Los Angeles", "limit": 4, "cursor": body["pagination"]["next_cursor"]},
        headers=headers,
    )
    assert [r["permit_number"] for r in page.json()["results"]] == [
        f"26010-10000-{i:05d}" for i in range(4, 8)
    ]
    assert await used(client, headers) == 2


async def test_a_county_scope_alone_is_broad_and_retried_before_inconclusive(
    client: httpx.AsyncClient, ctx: AppContext, sources: dict[str, FakeSearchSource]
) -> None:
    seed(sources)
    sources["epicla"].script = ["empty", RetryLater("epicla", "slow", reason="timeout")]
    headers = await key(ctx)
    params = {"county": "Los Angeles County"}
    response = await client.get(URL, params=params, headers=headers)
    assert response.status_code == 200, response.text
    assert response.json()["result_count"] == 7
    assert len(sources["epicla"].calls) == 3

    sources["epicla"].calls.clear()
    sources["epicla"].fail_always = RetryLater("epicla", "slow", reason="timeout")
    response = await client.get(URL, params=params, headers=headers)
    assert_problem(response, 503, "source_inconclusive")
    assert len(sources["epicla"].calls) == 3
    assert await used(client, headers) == 1


async def test_narrow_or_city_searches_are_not_retried(
    client: httpx.AsyncClient, ctx: AppContext, sources: dict[str, FakeSearchSource]
) -> None:
    sources["epicla"].fail_always = RetryLater("epicla", "slow", reason="timeout")
    sources["ladbs"].fail_always = RetryLater("ladbs", "slow", reason="timeout")
    headers = await key(ctx)
    await client.get(URL, params={"date_from": "2026-11-01", "zip": "90012"}, headers=headers)
    await client.get(URL, params={"date_from": "2026-11-01"}, headers=headers)
    assert len(sources["epicla"].calls) == 1 + 3
    assert len(sources["ladbs"].calls) == 2


async def test_bad_input_costs_nothing_and_names_the_parameter(
    client: httpx.AsyncClient, ctx: AppContext, sources: dict[str, FakeSearchSource]
) -> None:
    headers = await key(ctx)
    for params, code in [
        ({}, "filter_required"),
        ({"zip": "90012", "contractor": "Acme Builders"}, "unsupported_filter"),
        ({"lat": "34", "lon": "-118"}, "incomplete_radius"),
        ({"parcel": [str(1000000000 + i) for i in range(26)]}, "too_many_parcels"),
        ({"date_from": "2026-02-02", "date_to": "2026-02-01"}, "invalid_date_range"),
        ({"value_min": "9", "value_max": "1"}, "invalid_value_range"),
        ({"zip": "abc"}, "invalid_zip"),
    ]:
        response = await client.get(URL, params=params, headers=headers)
        assert_problem(response, 400, code)
    assert await used(client, headers) == 0
    assert sources["ladbs"].calls == []


async def test_overage_with_addon_on_paid_plan_accrues(
    client: httpx.AsyncClient, ctx: AppContext, sources: dict[str, FakeSearchSource]
) -> None:
    seed(sources)
    account = await make_account(ctx, "developer", discovery_addon=True, overage=True)
    headers = {"X-API-Key": account.live_key}
    async with ctx.sessionmaker() as session:
        principal = await accounts.resolve_key(session, account.live_key)
    assert principal is not None
    async with ctx.transaction() as session:
        await usage.reserve(session, principal, Meter.DISCOVERY, 400, ctx.clock.now())
    response = await client.get(URL, params={"zip": "90012"}, headers=headers)
    assert response.status_code == 200
    assert response.headers["x-ratelimit-remaining"] == "0"
    assert await used(client, headers) == 401


async def test_free_plan_stops_at_five(
    client: httpx.AsyncClient, ctx: AppContext, sources: dict[str, FakeSearchSource]
) -> None:
    seed(sources)
    account = await make_account(ctx, "free", overage=True)
    headers = {"X-API-Key": account.live_key}
    async with ctx.sessionmaker() as session:
        principal = await accounts.resolve_key(session, account.live_key)
    assert principal is not None
    async with ctx.transaction() as session:
        await usage.reserve(session, principal, Meter.DISCOVERY, 4, ctx.clock.now())
    first = await client.get(URL, params={"zip": "90012"}, headers=headers)
    assert first.status_code == 200
    assert first.headers["x-ratelimit-remaining"] == "0"
    second = await client.get(URL, params={"zip": "90012"}, headers=headers)
    assert_problem(second, 429, "rate_limit_exceeded")
    assert await used(client, headers) == 5
