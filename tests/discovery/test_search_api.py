"""GET /api/v1/permits/search through the app (ASGI) on both databases, with fake sources.

The sources are fakes of the adapters (tests/support/fake_sources.py); everything else is
real: auth, the discovery meter, cursors, problems.
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
from permitapi.kit.clock import FrozenClock
from permitapi.sources.base import Blocked, RetryLater, SourceFreshness
from permitapi.usage import service as usage
from tests.foundation.test_problems import assert_problem
from tests.support.accounts import make_account
from tests.support.fake_sources import FakeSearchSource, hit

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


async def test_merges_both_sources_newest_first_with_thin_hits(
    client: httpx.AsyncClient, ctx: AppContext, sources: dict[str, FakeSearchSource]
) -> None:
    seed(sources)
    headers = await key(ctx)
    response = await client.get(URL, params={"zip": "90012", "limit": 5}, headers=headers)
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["result_count"] == 5
    assert body["partial"] is False
    assert body["warnings"] == []
    keys = [(r["issued_date"], r["jurisdiction"], r["permit_number"]) for r in body["results"]]
    assert keys == [
        ("2026-11-20", "epicla", "UNC-BLDR261100000001"),
        ("2026-11-20", "ladbs", "26010-10000-00000"),
        ("2026-11-19", "ladbs", "26010-10000-00001"),
        ("2026-11-18", "epicla", "UNC-BLDR261101000001"),
        ("2026-11-18", "ladbs", "26010-10000-00002"),
    ]
    assert set(body["results"][0]) == {
        "permit_number", "jurisdiction", "address", "permit_type", "status", "valuation",
        "issued_date", "applied_date",
    }  # fmt: skip
    assert body["pagination"]["has_more"] is True
    assert body["pagination"]["next_cursor"].startswith("v1.")
    assert set(body["source_freshness"]) == {"ladbs", "epicla"}
    assert body["source_freshness"]["ladbs"] == {
        "newest_issue_date": "2026-11-20",
        "requested_through": "2026-11-22",
        "lag_days": 2,
        "reliability": "operational",
    }
    # the rate-limit headers show the discovery meter after this search
    assert response.headers["x-ratelimit-limit"] == "400"
    assert response.headers["x-ratelimit-remaining"] == "399"
    assert [c.offset for c in sources["ladbs"].calls] == [0]
    assert sources["ladbs"].calls[0].zip == "90012"


async def test_pages_walk_both_sources_completely_without_repeats(
    client: httpx.AsyncClient, ctx: AppContext, sources: dict[str, FakeSearchSource]
) -> None:
    seed(sources)
    headers = await key(ctx)
    params: dict[str, Any] = {"parcel": "5432-012-019", "limit": 4}
    seen: list[tuple[str, str]] = []
    pages = 0
    while True:
        response = await client.get(URL, params=params, headers=headers)
        assert response.status_code == 200, response.text
        body = response.json()
        pages += 1
        seen += [(r["jurisdiction"], r["permit_number"]) for r in body["results"]]
        if not body["pagination"]["has_more"]:
            assert body["pagination"]["next_cursor"] is None
            break
        params["cursor"] = body["pagination"]["next_cursor"]
    assert len(seen) == 17
    assert len(set(seen)) == 17
    assert pages == 5
    assert await used(client, headers) == pages  # one search per page
    # an exhausted source is not asked again
    assert len(sources["ladbs"].calls) == pages - 1


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


async def test_radius_returns_only_permits_inside_the_circle(
    client: httpx.AsyncClient, ctx: AppContext, sources: dict[str, FakeSearchSource]
) -> None:
    lat, lon = DOWNTOWN
    sources["ladbs"].add(hit("NEAR-1", "ladbs", date(2026, 11, 1), lat=lat + 0.005, lon=lon))
    sources["ladbs"].add(hit("FAR-1", "ladbs", date(2026, 11, 2), lat=lat + 0.2, lon=lon))
    # a source that matches an envelope, not a circle: its corner hit must still be dropped
    sources["epicla"].add(hit("NEAR-2", "epicla", date(2026, 11, 3), lat=lat, lon=lon - 0.01))

    def envelope(criteria: Any) -> None:
        sources["epicla"].permits.append(
            type(sources["epicla"].permits[0])(
                hit("CORNER", "epicla", date(2026, 11, 4), lat=lat + 0.0135, lon=lon + 0.0165)
            )
        )

    sources["epicla"].on_call = envelope
    headers = await key(ctx)
    response = await client.get(
        URL, params={"lat": lat, "lon": lon, "radius_mi": 1}, headers=headers
    )
    assert response.status_code == 200
    numbers = [r["permit_number"] for r in response.json()["results"]]
    assert numbers == ["NEAR-2", "NEAR-1"]


async def test_one_source_down_gives_partial_results_and_keeps_the_credit(
    client: httpx.AsyncClient, ctx: AppContext, sources: dict[str, FakeSearchSource]
) -> None:
    seed(sources)
    sources["epicla"].fail_always = RetryLater("epicla", "connect timeout", reason="timeout")
    headers = await key(ctx)
    response = await client.get(URL, params={"zip": "90012", "limit": 3}, headers=headers)
    assert response.status_code == 200
    body = response.json()
    assert body["partial"] is True
    assert [r["jurisdiction"] for r in body["results"]] == ["ladbs"] * 3
    assert body["warnings"][0]["source"] == "epicla"
    assert body["warnings"][0]["code"] == "source_unavailable"
    assert body["source_freshness"]["epicla"]["reliability"] == "down"
    assert body["source_freshness"]["ladbs"]["reliability"] == "operational"
    assert await used(client, headers) == 1
    # the failed source keeps its place: the next page asks it again from the start
    sources["epicla"].fail_always = None
    cursor = body["pagination"]["next_cursor"]
    response = await client.get(
        URL, params={"zip": "90012", "limit": 3, "cursor": cursor}, headers=headers
    )
    assert response.status_code == 200
    assert sources["epicla"].calls[-1].offset == 0
    assert sources["ladbs"].calls[-1].offset == 3


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


async def test_empty_with_a_failed_source_is_503_inconclusive_and_releases(
    client: httpx.AsyncClient, ctx: AppContext, sources: dict[str, FakeSearchSource]
) -> None:
    sources["ladbs"].fail_always = RetryLater("ladbs", "maintenance", reason="maintenance")
    headers = await key(ctx)
    response = await client.get(URL, params={"zip": "90012"}, headers=headers)
    body = assert_problem(response, 503, "source_inconclusive")
    assert response.headers["retry-after"] == "30"
    assert body["retry_after_seconds"] == 30
    assert body["warnings"][0]["source"] == "ladbs"
    assert body["source_freshness"]["ladbs"]["reliability"] == "down"
    assert body["source_freshness"]["epicla"]["reliability"] == "operational"
    assert await used(client, headers) == 0


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


async def test_verified_empty_result_is_200(
    client: httpx.AsyncClient, ctx: AppContext, sources: dict[str, FakeSearchSource]
) -> None:
    seed(sources)
    headers = await key(ctx)
    response = await client.get(URL, params={"zip": "90210"}, headers=headers)
    assert response.status_code == 200
    body = response.json()
    assert (body["result_count"], body["partial"], body["pagination"]) == (
        0,
        False,
        {"has_more": False, "next_cursor": None},
    )
    assert await used(client, headers) == 1


async def test_lagging_source_empty_window_is_503_source_lagging(
    client: httpx.AsyncClient, ctx: AppContext, sources: dict[str, FakeSearchSource]
) -> None:
    sources["epicla"].freshness = SourceFreshness(
        date(2026, 11, 8), date(2026, 11, 22), 14, "degraded"
    )
    headers = await key(ctx)
    params = {"county": "Los Angeles County", "date_from": "2026-11-15", "permit_type": "Building"}
    response = await client.get(URL, params=params, headers=headers)
    body = assert_problem(response, 503, "source_lagging")
    assert response.headers["retry-after"] == "3600"
    assert body["source_freshness"]["epicla"] == {
        "newest_issue_date": "2026-11-08",
        "requested_through": "2026-11-22",
        "lag_days": 14,
        "reliability": "degraded",
    }
    assert body["warnings"][0]["code"] == "source_lagging"
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


async def test_cursor_tampering_expiry_and_mismatch_are_invalid_cursor(
    client: httpx.AsyncClient,
    ctx: AppContext,
    sources: dict[str, FakeSearchSource],
    clock: FrozenClock,
) -> None:
    seed(sources)
    headers = await key(ctx)
    params: dict[str, Any] = {"zip": "90012", "limit": 2}
    first = (await client.get(URL, params=params, headers=headers)).json()
    token = first["pagination"]["next_cursor"]
    before = await used(client, headers)

    version, body, signature = token.split(".")
    tampered = f"{version}.{body[:-2]}AA.{signature}"
    cases = [
        {**params, "cursor": tampered},
        {**params, "cursor": "v1.e30.AAAA"},
        {**params, "cursor": "not-a-cursor"},
        {**params, "zip": "90013", "cursor": token},  # other filters
        {**params, "jurisdiction": "ladbs", "cursor": token},  # other scope
    ]
    for case in cases:
        response = await client.get(URL, params=case, headers=headers)
        problem = assert_problem(response, 400, "invalid_cursor")
        assert problem["parameter"] == "cursor"
    other_key = await key(ctx)
    response = await client.get(URL, params={**params, "cursor": token}, headers=other_key)
    assert_problem(response, 400, "invalid_cursor")
    assert await used(client, headers) == before  # refused cursors cost nothing

    # a different page size is allowed with the same cursor; 15 minutes later it has expired
    ok = await client.get(URL, params={**params, "limit": 3, "cursor": token}, headers=headers)
    assert ok.status_code == 200
    clock.advance(timedelta(minutes=15, seconds=1))
    response = await client.get(URL, params={**params, "cursor": token}, headers=headers)
    assert "expired" in assert_problem(response, 400, "invalid_cursor")["detail"]


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


async def test_sandbox_keys_are_refused(
    client: httpx.AsyncClient, ctx: AppContext, sources: dict[str, FakeSearchSource]
) -> None:
    account = await make_account(ctx, "pro", discovery_addon=True)
    response = await client.get(
        URL, params={"zip": "90012"}, headers={"X-API-Key": account.sandbox_key}
    )
    assert_problem(response, 403, "sandbox_not_supported")
    assert response.headers["x-sandbox-mode"] == "true"
    assert sources["ladbs"].calls == []


async def test_key_is_required(client: httpx.AsyncClient) -> None:
    assert_problem(await client.get(URL, params={"zip": "90012"}), 401, "invalid_api_key")


async def test_free_allowance_without_addon_then_429(
    client: httpx.AsyncClient, ctx: AppContext, sources: dict[str, FakeSearchSource]
) -> None:
    seed(sources)
    headers = await key(ctx, "developer", addon=False, overage=True)
    for expected_remaining in (4, 3, 2, 1, 0):
        response = await client.get(URL, params={"zip": "90012"}, headers=headers)
        assert response.status_code == 200
        assert response.headers["x-ratelimit-limit"] == "5"
        assert response.headers["x-ratelimit-remaining"] == str(expected_remaining)
    response = await client.get(URL, params={"zip": "90012"}, headers=headers)
    body = assert_problem(response, 429, "rate_limit_exceeded")
    assert body["meter"] == "discovery"
    assert "add-on" in body["upgrade_hint"]
    assert await used(client, headers) == 5
    # the lookup meter never moved
    usage = (await client.get("/api/v1/usage", headers=headers)).json()
    assert usage["lookup"]["used"] == 0


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
