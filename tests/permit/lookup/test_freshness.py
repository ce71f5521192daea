"""`data_freshness` is present in every permit response: the canonical resource and the
inspections, conditions and history answers carry the status record's object, built by the same
builder from the same stored row (docs/decisions.md, "Lookups and operations")."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import httpx

from permitapi.context import AppContext
from permitapi.kit.clock import FrozenClock
from permitapi.sources import detect
from permitapi.sources.base import RetryLater
from tests.support.accounts import make_account
from tests.support.fake_portal import FakePortal, snapshot
from tests.support.permits import LADBS_NUMBER

STATUS = f"/api/v1/permits/{LADBS_NUMBER}/status"
PERMIT_ID = str(detect.permit_id("ladbs", LADBS_NUMBER))
STORED_READS = (
    f"/api/v1/permits/{PERMIT_ID}",
    f"/api/v1/permits/{LADBS_NUMBER}/inspections",
    f"/api/v1/permits/{LADBS_NUMBER}/conditions",
    f"/api/v1/permits/{LADBS_NUMBER}/history",
)
FIELDS = {
    "age_seconds", "cached", "refresh_available", "fetched_at", "last_successful_fetch_at",
    "last_attempted_fetch_at", "is_stale", "stale_reason", "next_refresh_at",
}  # fmt: skip


async def stored_freshness(client: httpx.AsyncClient, key: str) -> list[dict[str, Any]]:
    """`data_freshness` of the resource and the three detail answers, in STORED_READS order."""
    found = []
    for path in STORED_READS:
        response = await client.get(path, headers={"X-API-Key": key})
        assert response.status_code == 200, (path, response.text)
        found.append(response.json()["data_freshness"])
    return found


async def test_stored_reads_carry_the_status_records_freshness(
    client: httpx.AsyncClient, ctx: AppContext, portal: FakePortal, clock: FrozenClock
) -> None:
    portal.add(snapshot("ladbs", LADBS_NUMBER))
    key = (await make_account(ctx, "pro")).live_key
    assert (await client.get(STATUS, headers={"X-API-Key": key})).status_code == 200
    clock.advance(timedelta(minutes=10))
    cached = (await client.get(STATUS, headers={"X-API-Key": key})).json()
    assert cached["source"] == "cached"
    expected = {
        "age_seconds": 600,
        "cached": True,
        "refresh_available": True,
        "fetched_at": "2026-11-22T12:00:00Z",
        "last_successful_fetch_at": "2026-11-22T12:00:00Z",
        "last_attempted_fetch_at": "2026-11-22T12:00:00Z",
        "is_stale": False,
        "stale_reason": None,
        "next_refresh_at": "2026-11-22T16:00:00Z",
    }
    assert set(expected) == FIELDS
    assert cached["data_freshness"] == expected
    assert await stored_freshness(client, key) == [expected] * 4
    assert portal.total_requests == 1


async def test_free_plan_stored_reads_offer_no_refresh(
    client: httpx.AsyncClient, ctx: AppContext, portal: FakePortal
) -> None:
    portal.add(snapshot("ladbs", LADBS_NUMBER))
    key = (await make_account(ctx, "free")).live_key
    status = (await client.get(STATUS, headers={"X-API-Key": key})).json()
    assert status["data_freshness"]["refresh_available"] is False
    for path in STORED_READS:
        # A key of its own for each read: the free plan's burst window is 3 calls a minute.
        reader = (await make_account(ctx, "free")).live_key
        response = await client.get(path, headers={"X-API-Key": reader})
        assert response.status_code == 200, (path, response.text)
        assert response.json()["data_freshness"] == status["data_freshness"] | {"cached": True}


async def test_after_a_failed_refresh_stored_reads_are_stale_like_the_status(
    client: httpx.AsyncClient, ctx: AppContext, portal: FakePortal, clock: FrozenClock
) -> None:
    portal.add(snapshot("ladbs", LADBS_NUMBER))
    key = (await make_account(ctx, "pro")).live_key
    await client.get(STATUS, headers={"X-API-Key": key})
    clock.advance(timedelta(hours=5))
    portal.fault = RetryLater("ladbs", "timed out", reason="timeout")
    stale = (await client.get(STATUS, headers={"X-API-Key": key})).json()
    assert stale["source"] == "stale_cache"
    expected = {
        "age_seconds": 5 * 3600,
        "cached": True,
        "refresh_available": True,
        "fetched_at": "2026-11-22T12:00:00Z",
        "last_successful_fetch_at": "2026-11-22T12:00:00Z",
        "last_attempted_fetch_at": "2026-11-22T17:00:00Z",
        "is_stale": True,
        "stale_reason": "source_timeout",
        "next_refresh_at": "2026-11-22T17:01:00Z",  # the end of the failure backoff
    }
    assert stale["data_freshness"] == expected
    assert await stored_freshness(client, key) == [expected] * 4
    # Past the backoff the next status lookup retries the portal: due now.
    clock.advance(timedelta(minutes=2))
    later = await stored_freshness(client, key)
    assert (
        later
        == [{**expected, "age_seconds": 5 * 3600 + 120, "next_refresh_at": "2026-11-22T17:02:00Z"}]
        * 4
    )
    assert portal.total_requests == 2  # stored reads never ask the portal


async def test_an_expired_copy_is_not_stale_without_a_failure(
    client: httpx.AsyncClient, ctx: AppContext, portal: FakePortal, clock: FrozenClock
) -> None:
    portal.add(snapshot("ladbs", LADBS_NUMBER))
    key = (await make_account(ctx, "pro")).live_key
    await client.get(STATUS, headers={"X-API-Key": key})
    clock.advance(timedelta(hours=5))
    expected = {
        "age_seconds": 5 * 3600,
        "cached": True,
        "refresh_available": True,
        "fetched_at": "2026-11-22T12:00:00Z",
        "last_successful_fetch_at": "2026-11-22T12:00:00Z",
        "last_attempted_fetch_at": "2026-11-22T12:00:00Z",
        "is_stale": False,
        "stale_reason": None,
        "next_refresh_at": "2026-11-22T17:00:00Z",  # expired: the next lookup fetches
    }
    assert await stored_freshness(client, key) == [expected] * 4
    assert portal.total_requests == 1
