"""Durable operations: 202 acceptance, worker completion, settlement, owner-scoped polling,
and exactly one operation_completed event."""

from __future__ import annotations

import httpx

from permitapi.composition import job_sources
from permitapi.context import AppContext
from permitapi.event import repository as events
from permitapi.sources.base import RetryLater
from permitapi.worker.runner import Worker
from tests.permit.helpers import used
from tests.support.accounts import make_account
from tests.support.fake_portal import FakePortal, snapshot

ACA = "BLD24-00123"
ACA_PATH = f"/api/v1/permits/{ACA}/status"
LADBS_PATH = "/api/v1/permits/21030-20000-00256/status"


async def completed_events(ctx: AppContext) -> list[dict[str, object]]:
    async with ctx.sessionmaker() as session:
        return [e.data for e in await events.of_type(session, "operation_completed")]


async def test_browser_backed_miss_is_202_then_worker_succeeds(
    client: httpx.AsyncClient, ctx: AppContext, portal: FakePortal
) -> None:
    portal.add(snapshot("aca:sandiego", ACA, "Issued"))
    account = await make_account(ctx, "free")
    key = account.live_key
    accepted = await client.get(
        ACA_PATH, params={"jurisdiction": "aca:sandiego"}, headers={"X-API-Key": key}
    )
    assert accepted.status_code == 202, accepted.text
    operation = accepted.json()
    assert operation["status"] == "pending"
    assert operation["operation_type"] == "permit_refresh"
    assert accepted.headers["Location"] == operation["poll_url"]
    assert accepted.headers["Retry-After"] == "2"
    assert "Preference-Applied" not in accepted.headers
    assert accepted.headers["X-RateLimit-Remaining"] == "199"
    assert portal.total_requests == 0
    assert await used(ctx, key) == 1

    polled = await client.get(operation["poll_url"], headers={"X-API-Key": key})
    assert polled.json()["status"] == "pending"
    assert await Worker(ctx, job_sources()).run_once() == 1
    done = (await client.get(operation["poll_url"], headers={"X-API-Key": key})).json()
    assert done["status"] == "succeeded"
    assert done["started_at"] is not None
    assert done["completed_at"] is not None
    assert done["error"] is None
    assert done["result"]["source"] == "live_scrape"
    assert done["result"]["jurisdiction"] == "aca:sandiego"
    assert done["result"]["data_freshness"]["refresh_available"] is False
    assert await used(ctx, key) == 1  # consumed; polling cost nothing
    emitted = await completed_events(ctx)
    assert len(emitted) == 1
    assert emitted[0]["operation_id"] == operation["operation_id"]
    assert emitted[0]["status"] == "succeeded"
    assert await Worker(ctx, job_sources()).run_once() == 0
    assert len(await completed_events(ctx)) == 1

    # Now cached: synchronous, and rule 7 needs no jurisdiction.
    cached = await client.get(ACA_PATH, headers={"X-API-Key": key})
    assert cached.status_code == 200
    assert cached.json()["source"] == "cached"


async def test_other_key_gets_404_for_an_operation(
    client: httpx.AsyncClient, ctx: AppContext, portal: FakePortal
) -> None:
    owner = (await make_account(ctx, "pro")).live_key
    other = await make_account(ctx, "pro")
    accepted = await client.get(
        ACA_PATH, params={"jurisdiction": "aca:sandiego"}, headers={"X-API-Key": owner}
    )
    url = accepted.json()["poll_url"]
    for key in (other.live_key, other.sandbox_key):
        refused = await client.get(url, headers={"X-API-Key": key})
        assert refused.status_code == 404
        assert refused.json()["code"] == "operation_not_found"
    missing = await client.get("/api/v1/operations/nope", headers={"X-API-Key": owner})
    assert missing.status_code == 404
    assert (await client.get(url)).status_code == 401


async def test_polling_is_not_burst_limited(
    client: httpx.AsyncClient, ctx: AppContext, portal: FakePortal
) -> None:
    key = (await make_account(ctx, "free")).live_key
    accepted = await client.get(
        ACA_PATH, params={"jurisdiction": "aca:sandiego"}, headers={"X-API-Key": key}
    )
    for _ in range(10):
        polled = await client.get(accepted.json()["poll_url"], headers={"X-API-Key": key})
        assert polled.status_code == 200
    assert await used(ctx, key) == 1


async def test_failed_operation_releases_credits(
    client: httpx.AsyncClient, ctx: AppContext, portal: FakePortal
) -> None:
    portal.fault = RetryLater("aca:sandiego", "down", reason="down")
    key = (await make_account(ctx, "pro")).live_key
    accepted = await client.get(
        ACA_PATH, params={"jurisdiction": "aca:sandiego"}, headers={"X-API-Key": key}
    )
    assert await used(ctx, key) == 1
    await Worker(ctx, job_sources()).run_once()
    done = (await client.get(accepted.json()["poll_url"], headers={"X-API-Key": key})).json()
    assert done["status"] == "failed"
    assert done["result"] is None
    assert done["error"]["code"] == "jurisdiction_unavailable"
    assert done["error"]["retryable"] is True
    assert await used(ctx, key) == 0
    emitted = await completed_events(ctx)
    assert [e["status"] for e in emitted] == ["failed"]


async def test_missing_permit_operation_succeeds_with_not_found_result(
    client: httpx.AsyncClient, ctx: AppContext, portal: FakePortal
) -> None:
    key = (await make_account(ctx, "pro")).live_key
    accepted = await client.get(
        ACA_PATH, params={"jurisdiction": "aca:sandiego"}, headers={"X-API-Key": key}
    )
    await Worker(ctx, job_sources()).run_once()
    done = (await client.get(accepted.json()["poll_url"], headers={"X-API-Key": key})).json()
    assert done["status"] == "succeeded"
    assert done["result"]["status"] == 404
    assert done["result"]["code"] == "permit_not_found"
    assert await used(ctx, key) == 1


async def test_force_refresh_respond_async_reserves_ten(
    client: httpx.AsyncClient, ctx: AppContext, portal: FakePortal
) -> None:
    portal.add(snapshot("ladbs", "21030-20000-00256"))
    key = (await make_account(ctx, "developer")).live_key
    accepted = await client.get(
        LADBS_PATH,
        params={"force_refresh": "true"},
        headers={"X-API-Key": key, "Prefer": "respond-async"},
    )
    assert accepted.status_code == 202
    assert accepted.headers["Preference-Applied"] == "respond-async"
    assert accepted.headers["Retry-After"] == "2"
    assert accepted.headers["Location"].startswith("/api/v1/operations/")
    assert await used(ctx, key) == 10
    await Worker(ctx, job_sources()).run_once()
    done = (await client.get(accepted.headers["Location"], headers={"X-API-Key": key})).json()
    assert done["status"] == "succeeded"
    assert done["result"]["source"] == "live_scrape"
    assert done["result"]["data_freshness"]["refresh_available"] is True
    assert await used(ctx, key) == 10


async def test_prefer_without_force_refresh_stays_synchronous(
    client: httpx.AsyncClient, ctx: AppContext, portal: FakePortal
) -> None:
    portal.add(snapshot("ladbs", "21030-20000-00256"))
    key = (await make_account(ctx, "pro")).live_key
    response = await client.get(LADBS_PATH, headers={"X-API-Key": key, "Prefer": "respond-async"})
    assert response.status_code == 200
    assert "Preference-Applied" not in response.headers


async def test_force_refresh_async_on_free_plan_is_403(
    client: httpx.AsyncClient, ctx: AppContext, portal: FakePortal
) -> None:
    key = (await make_account(ctx, "free")).live_key
    response = await client.get(
        LADBS_PATH,
        params={"force_refresh": "true"},
        headers={"X-API-Key": key, "Prefer": "respond-async"},
    )
    assert response.status_code == 403
    assert response.json()["code"] == "force_refresh_not_available"
    assert await used(ctx, key) == 0
