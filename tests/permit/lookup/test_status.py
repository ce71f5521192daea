"""GET /permits/{permit_number}/status: behaviours 1-8 of the contract, with exact meter
movements for every outcome, over the real app and database (fake portal adapter)."""

from __future__ import annotations

from datetime import timedelta

import httpx
import pytest

from permitapi.context import AppContext
from permitapi.kit.clock import FrozenClock
from permitapi.sources import detect
from permitapi.sources.base import NormalizedStatus, PortalChanged, RetryLater
from tests.permit.helpers import used
from tests.support.accounts import make_account
from tests.support.fake_portal import FakePortal, snapshot

LADBS = "21030-20000-00256"
URL = f"/api/v1/permits/{LADBS}/status"


async def test_miss_fetches_live_then_cache_hits(
    client: httpx.AsyncClient, ctx: AppContext, portal: FakePortal
) -> None:
    portal.add(snapshot("ladbs", LADBS))
    key = (await make_account(ctx, "developer")).live_key
    first = await client.get(URL, headers={"X-API-Key": key})
    assert first.status_code == 200, first.text
    body = first.json()
    assert body["source"] == "live_scrape"
    assert body["jurisdiction"] == "ladbs"
    assert body["jurisdiction_display"].startswith("City of Los Angeles")
    assert body["status"] == "Issued"
    assert body["portal_status"] == "Issued"
    assert body["status_phase"] == "active"
    assert body["address"].startswith("1234 W Sunset")
    assert body["work_description"] == "Add a bedroom"
    assert body["permit_type"] == "Bldg-Addition"
    assert len(body["permit_id"]) == 36
    freshness = body["data_freshness"]
    assert set(freshness) == {
        "age_seconds", "cached", "refresh_available", "fetched_at", "last_successful_fetch_at",
        "last_attempted_fetch_at", "is_stale", "stale_reason", "next_refresh_at",
    }  # fmt: skip
    assert freshness["cached"] is False
    assert freshness["refresh_available"] is True
    assert freshness["is_stale"] is False
    assert freshness["next_refresh_at"] == "2026-11-22T16:00:00Z"
    assert first.headers["X-RateLimit-Remaining"] == "4999"

    second = await client.get(URL, headers={"X-API-Key": key})
    assert second.json()["source"] == "cached"
    assert second.json()["data_freshness"]["cached"] is True
    assert second.headers["X-RateLimit-Remaining"] == "4998"
    assert portal.total_requests == 1
    assert await used(ctx, key) == 2


async def test_cache_expires_after_four_hours(
    client: httpx.AsyncClient, ctx: AppContext, portal: FakePortal, clock: FrozenClock
) -> None:
    portal.add(snapshot("ladbs", LADBS))
    key = (await make_account(ctx, "pro")).live_key
    await client.get(URL, headers={"X-API-Key": key})
    clock.advance(timedelta(hours=3, minutes=59))
    hit = await client.get(URL, headers={"X-API-Key": key})
    assert hit.json()["source"] == "cached"
    assert hit.json()["data_freshness"]["age_seconds"] == 3 * 3600 + 59 * 60
    clock.advance(timedelta(minutes=1))
    assert (await client.get(URL, headers={"X-API-Key": key})).json()["source"] == "live_scrape"
    assert portal.total_requests == 2


async def test_free_plan_has_no_refresh_available(
    client: httpx.AsyncClient, ctx: AppContext, portal: FakePortal
) -> None:
    portal.add(snapshot("ladbs", LADBS))
    key = (await make_account(ctx, "free")).live_key
    response = await client.get(URL, headers={"X-API-Key": key})
    assert response.json()["data_freshness"]["refresh_available"] is False


async def test_portal_down_with_cache_answers_stale(
    client: httpx.AsyncClient, ctx: AppContext, portal: FakePortal, clock: FrozenClock
) -> None:
    portal.add(snapshot("ladbs", LADBS))
    key = (await make_account(ctx, "pro")).live_key
    await client.get(URL, headers={"X-API-Key": key})
    clock.advance(timedelta(hours=5))
    portal.fault = RetryLater("ladbs", "timed out", reason="timeout")
    stale = await client.get(URL, headers={"X-API-Key": key})
    assert stale.status_code == 200
    body = stale.json()
    assert body["source"] == "stale_cache"
    assert body["data_freshness"]["is_stale"] is True
    assert body["data_freshness"]["stale_reason"] == "source_timeout"
    assert body["data_freshness"]["age_seconds"] == 5 * 3600
    assert await used(ctx, key) == 2  # a stale 200 consumes
    # Within the failure backoff the portal is not asked again.
    again = await client.get(URL, headers={"X-API-Key": key})
    assert again.json()["data_freshness"]["stale_reason"] == "source_timeout"
    assert portal.total_requests == 2
    clock.advance(timedelta(minutes=2))
    portal.fault = PortalChanged("ladbs", "layout changed")
    changed = await client.get(URL, headers={"X-API-Key": key})
    assert changed.json()["data_freshness"]["stale_reason"] == "source_changed"
    portal.fault = None
    clock.advance(timedelta(minutes=2))
    back = await client.get(URL, headers={"X-API-Key": key})
    assert back.json()["source"] == "live_scrape"
    assert back.json()["data_freshness"]["stale_reason"] is None


async def test_portal_down_without_cache_is_503_and_releases(
    client: httpx.AsyncClient, ctx: AppContext, portal: FakePortal
) -> None:
    portal.fault = RetryLater("ladbs", "down", reason="down", retry_after=45)
    key = (await make_account(ctx, "pro")).live_key
    response = await client.get(URL, headers={"X-API-Key": key})
    assert response.status_code == 503
    assert response.headers["content-type"] == "application/problem+json"
    assert response.json()["code"] == "jurisdiction_unavailable"
    assert response.headers["Retry-After"] == "45"
    assert response.headers["X-RateLimit-Remaining"] == "25000"
    assert await used(ctx, key) == 0


async def test_confirmed_missing_is_404_and_consumes(
    client: httpx.AsyncClient, ctx: AppContext, portal: FakePortal
) -> None:
    key = (await make_account(ctx, "pro")).live_key
    response = await client.get(URL, headers={"X-API-Key": key})
    assert response.status_code == 404
    assert response.json()["code"] == "permit_not_found"
    assert response.headers["X-RateLimit-Remaining"] == "24999"
    assert await used(ctx, key) == 1


async def test_unknown_format_is_jurisdiction_not_supported(
    client: httpx.AsyncClient, ctx: AppContext, portal: FakePortal
) -> None:
    key = (await make_account(ctx, "pro")).live_key
    response = await client.get("/api/v1/permits/hello%20world/status", headers={"X-API-Key": key})
    assert response.status_code == 404
    assert response.json()["code"] == "jurisdiction_not_supported"
    assert await used(ctx, key) == 1
    assert portal.total_requests == 0


async def test_ambiguous_number_is_300_with_every_candidate(
    client: httpx.AsyncClient, ctx: AppContext, portal: FakePortal
) -> None:
    key = (await make_account(ctx, "pro")).live_key
    response = await client.get("/api/v1/permits/BLD24-00123/status", headers={"X-API-Key": key})
    assert response.status_code == 300
    assert response.headers["content-type"] == "application/problem+json"
    body = response.json()
    assert body["code"] == body["error"] == "multiple_jurisdictions"
    slugs = [c["slug"] for c in body["candidates"]]
    expected = [j.slug for j in ctx.directory if j.matches("BLD24-00123")]
    assert sorted(slugs) == sorted(expected)
    assert len(slugs) > 5
    assert set(body["candidates"][0]) == {
        "slug", "display_name", "confidence", "reason", "permit_number", "permit_id",
    }  # fmt: skip
    assert body["candidates"][0]["permit_id"] == str(detect.permit_id(slugs[0], "BLD24-00123"))
    assert body["example"] == f"/api/v1/permits/BLD24-00123/status?jurisdiction={slugs[0]}"
    assert await used(ctx, key) == 1
    assert portal.total_requests == 0


async def test_status_resolution_and_detail_candidates_agree(
    client: httpx.AsyncClient, ctx: AppContext, portal: FakePortal
) -> None:
    """One builder: the 300 of a status lookup, of a resolution and of a detail endpoint offer
    the same candidates, each with the permit_id it produces."""
    key = (await make_account(ctx, "pro")).live_key
    number = "BLD24-00123"
    status = await client.get(f"/api/v1/permits/{number}/status", headers={"X-API-Key": key})
    resolution = await client.post(
        "/api/v1/permit-resolutions", json={"permit_number": number}, headers={"X-API-Key": key}
    )
    history = await client.get(f"/api/v1/permits/{number}/history", headers={"X-API-Key": key})
    assert status.status_code == resolution.status_code == history.status_code == 300
    candidates = status.json()["candidates"]
    assert resolution.json()["candidates"] == history.json()["candidates"] == candidates
    assert status.json()["permit_number"] == resolution.json()["permit_number"] == number
    assert history.json()["example"] == (
        f"/api/v1/permits/{number}/history?jurisdiction={candidates[0]['slug']}"
    )
    assert "example" not in resolution.json()


async def test_near_orders_candidates_and_malformed_is_ignored(
    client: httpx.AsyncClient, ctx: AppContext, portal: FakePortal
) -> None:
    key = (await make_account(ctx, "pro")).live_key
    path = "/api/v1/permits/BLD24-00123/status"
    san_diego = await client.get(path, params={"near": "32.7,-117.16"}, headers={"X-API-Key": key})
    fresno = await client.get(path, params={"near": "36.74,-119.78"}, headers={"X-API-Key": key})
    first_sd = san_diego.json()["candidates"][0]["slug"]
    first_fr = fresno.json()["candidates"][0]["slug"]
    assert first_sd != first_fr
    assert first_fr == "aca:fresno"
    plain = await client.get(path, headers={"X-API-Key": key})
    for bad in ("banana", "91,10", "1,2,3", "90210"):
        ignored = await client.get(path, params={"near": bad}, headers={"X-API-Key": key})
        assert ignored.status_code == 300
        assert ignored.json()["candidates"] == plain.json()["candidates"]


async def test_invalid_jurisdiction_is_400_and_free(
    client: httpx.AsyncClient, ctx: AppContext, portal: FakePortal
) -> None:
    key = (await make_account(ctx, "pro")).live_key
    response = await client.get(
        URL, params={"jurisdiction": "atlantis"}, headers={"X-API-Key": key}
    )
    assert response.status_code == 400
    assert response.json()["code"] == "invalid_jurisdiction"
    assert response.headers["X-RateLimit-Remaining"] == "25000"
    assert await used(ctx, key) == 0


async def test_bad_force_refresh_value_is_400(
    client: httpx.AsyncClient, ctx: AppContext, portal: FakePortal
) -> None:
    key = (await make_account(ctx, "pro")).live_key
    response = await client.get(URL, params={"force_refresh": "maybe"}, headers={"X-API-Key": key})
    assert response.status_code == 400
    body = response.json()
    assert body["code"] == "invalid_parameter"
    assert body["parameter"] == "force_refresh"
    assert body["errors"][0]["location"] == "query"
    assert body["detail"] == (
        "Invalid value for 'force_refresh': Input should be a valid boolean, unable to interpret"
        " input"
    )
    assert response.headers["X-RateLimit-Remaining"] == "25000"  # every authenticated answer
    assert await used(ctx, key) == 0


@pytest.mark.parametrize(
    ("query", "valid"),
    [
        ("force_refresh=", False),  # empty is a value, and not a boolean
        ("force_refresh=on&force_refresh=zz", False),  # the last of repeated values counts
        ("force_refresh=zz&force_refresh=off", True),
        ("force_refresh=NO", True),
        ("force_refresh=0", True),
    ],
)
async def test_force_refresh_parsing_follows_fastapi(
    client: httpx.AsyncClient, ctx: AppContext, portal: FakePortal, query: str, valid: bool
) -> None:
    """The route skips FastAPI's parameter solver (permit/lookup/fast/route.py); its parsing must
    still be FastAPI's, as the OpenAPI document describes it."""
    portal.add(snapshot("ladbs", LADBS))
    key = (await make_account(ctx, "pro")).live_key
    response = await client.get(f"{URL}?{query}", headers={"X-API-Key": key})
    if valid:
        assert response.status_code == 200, response.text
    else:
        assert response.status_code == 400, response.text
        assert response.json()["parameter"] == "force_refresh"


async def test_authentication_comes_before_parameter_validation(
    client: httpx.AsyncClient, ctx: AppContext, portal: FakePortal
) -> None:
    # Keyless: the anonymous demo is admitted (and counted) before parameters are checked.
    response = await client.get(URL, params={"force_refresh": "maybe"})
    assert response.status_code == 400
    assert response.headers["x-demo-mode"] == "true"
    free = (await make_account(ctx, "free")).live_key
    for _ in range(3):
        assert (await client.get(URL, headers={"X-API-Key": free})).status_code != 429
    # the burst window is checked with the key, before the bad parameter is looked at
    refused = await client.get(URL, params={"force_refresh": "maybe"}, headers={"X-API-Key": free})
    assert refused.status_code == 429
    assert refused.json()["code"] == "burst_limit_exceeded"


async def test_auth_errors(client: httpx.AsyncClient, portal: FakePortal) -> None:
    # No key: the demo answers from the curated dataset, never the portal.
    keyless = await client.get(URL)
    assert keyless.headers["x-demo-mode"] == "true"
    assert keyless.status_code in (200, 404)
    assert portal.total_requests == 0
    bad = await client.get(URL, headers={"X-API-Key": "sk_live_nope_nope_nope_nope"})
    assert bad.status_code == 401
    assert bad.json()["code"] == "invalid_api_key"


async def test_force_refresh_free_plan_is_403(
    client: httpx.AsyncClient, ctx: AppContext, portal: FakePortal
) -> None:
    key = (await make_account(ctx, "free")).live_key
    response = await client.get(URL, params={"force_refresh": "true"}, headers={"X-API-Key": key})
    assert response.status_code == 403
    assert response.json()["code"] == "force_refresh_not_available"
    assert await used(ctx, key) == 0
    assert portal.total_requests == 0


async def test_force_refresh_costs_ten_and_is_capped_per_hour(
    client: httpx.AsyncClient, ctx: AppContext, portal: FakePortal
) -> None:
    portal.add(snapshot("ladbs", LADBS))
    key = (await make_account(ctx, "pro")).live_key
    await client.get(URL, headers={"X-API-Key": key})
    for _ in range(10):
        forced = await client.get(URL, params={"force_refresh": "true"}, headers={"X-API-Key": key})
        assert forced.status_code == 200
        assert forced.json()["source"] == "live_scrape"
    assert await used(ctx, key) == 1 + 10 * 10
    assert portal.total_requests == 11
    refused = await client.get(URL, params={"force_refresh": "true"}, headers={"X-API-Key": key})
    assert refused.status_code == 429
    assert refused.json()["code"] == "force_refresh_limit_exceeded"
    assert int(refused.headers["Retry-After"]) > 0
    assert await used(ctx, key) == 101


async def test_lookup_with_jurisdiction_is_remembered(
    client: httpx.AsyncClient, ctx: AppContext, portal: FakePortal
) -> None:
    """Rule 7 with an HTTP-only jurisdiction: an Accela-looking number that EPIC-LA serves."""
    number = "CREB2025000372"
    portal.add(snapshot("epicla", number))
    key = (await make_account(ctx, "pro")).live_key
    path = f"/api/v1/permits/{number}/status"
    first = await client.get(path, params={"jurisdiction": "epicla"}, headers={"X-API-Key": key})
    assert first.status_code == 200, first.text
    later = await client.get(path, headers={"X-API-Key": key})
    assert later.status_code == 200
    assert later.json()["jurisdiction"] == "epicla"
    assert later.json()["source"] == "cached"


async def test_number_formatting_variants_share_one_cache_entry(
    client: httpx.AsyncClient, ctx: AppContext, portal: FakePortal
) -> None:
    portal.add(snapshot("epicla", "UNC-BLDR250827010774", "In Review", NormalizedStatus.IN_REVIEW))
    key = (await make_account(ctx, "pro")).live_key
    a = await client.get("/api/v1/permits/UNC-BLDR250827010774/status", headers={"X-API-Key": key})
    b = await client.get("/api/v1/permits/unc-bldr250827010774/status", headers={"X-API-Key": key})
    assert a.json()["status_phase"] == "pending"
    assert b.json()["source"] == "cached"
    assert a.json()["permit_id"] == b.json()["permit_id"]
