"""GET /metrics: request, portal, refusal, circuit and queue metrics as Prometheus reads them."""

from __future__ import annotations

from datetime import timedelta

import httpx
import pytest
from prometheus_client.parser import text_string_to_metric_families
from pydantic import SecretStr
from sqlalchemy import delete, update

from permitapi.app import create_app
from permitapi.config import Settings
from permitapi.context import AppContext
from permitapi.kit.clock import FrozenClock
from permitapi.kit.ids import new_uuid
from permitapi.permit.operation.models import Operation
from permitapi.watch.models import WatchedPermit
from permitapi.webhook.models import WebhookDelivery
from permitapi.worker.models import JobLease
from tests.support.accounts import make_account
from tests.support.fake_portal import FakePortal, snapshot

LADBS = "21030-20000-00256"
STATUS_ROUTE = "/api/v1/permits/{permit_number}/status"
REQUESTS = "permitapi_http_requests_total"
FETCHES = "permitapi_portal_fetches_total"
Scraped = dict[tuple[str, frozenset[tuple[str, str]]], float]


def samples(text: str) -> Scraped:
    found: Scraped = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            found[(sample.name, frozenset(sample.labels.items()))] = sample.value
    return found


async def scrape(client: httpx.AsyncClient) -> Scraped:
    response = await client.get("/metrics")
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/plain")
    return samples(response.text)


def value(
    scraped: dict[tuple[str, frozenset[tuple[str, str]]], float], name: str, **labels: str
) -> float:
    return scraped.get((name, frozenset(labels.items())), 0.0)


async def test_requests_are_counted_by_route_template_and_status(
    client: httpx.AsyncClient, ctx: AppContext, portal: FakePortal
) -> None:
    account = await make_account(ctx, "pro")
    portal.add(snapshot("ladbs", LADBS))
    before = await scrape(client)
    headers = {"X-API-Key": account.live_key}
    assert (await client.get(f"/api/v1/permits/{LADBS}/status", headers=headers)).status_code == 200
    assert (await client.get(f"/api/v1/permits/{LADBS}/status", headers=headers)).status_code == 200
    assert (await client.get("/no/such/route")).status_code == 404
    after = await scrape(client)

    def delta(name: str, **labels: str) -> float:
        return value(after, name, **labels) - value(before, name, **labels)

    # The template, never the permit number: label values stay bounded.
    assert (
        delta("permitapi_http_requests_total", route=STATUS_ROUTE, method="GET", status="200") == 2
    )
    assert (
        delta("permitapi_http_requests_total", route="unmatched", method="GET", status="404") == 1
    )
    assert (
        delta("permitapi_http_request_duration_seconds_count", route=STATUS_ROUTE, method="GET")
        == 2
    )
    # One live fetch (the second lookup was served from the cache).
    assert (
        delta(
            "permitapi_portal_fetches_total", source="ladbs", operation="fetch", outcome="success"
        )
        == 1
    )
    assert not any(LADBS in str(labels) for _, labels in after)


async def test_refusals_and_failed_fetches_are_counted(
    client: httpx.AsyncClient, ctx: AppContext, portal: FakePortal
) -> None:
    account = await make_account(ctx, "free")
    before = await scrape(client)
    headers = {"X-API-Key": account.live_key}
    codes = [
        (await client.get(f"/api/v1/permits/{LADBS}/status", headers=headers)).status_code
        for _ in range(4)
    ]
    after = await scrape(client)
    # The free plan's burst window is 3 a minute; the unknown permit is a confirmed 404.
    assert codes == [404, 404, 404, 429]
    refused = value(after, "permitapi_refusals_total", code="burst_limit_exceeded") - value(
        before, "permitapi_refusals_total", code="burst_limit_exceeded"
    )
    assert refused == 1
    not_found = value(
        after,
        "permitapi_portal_fetches_total",
        source="ladbs",
        operation="fetch",
        outcome="not_found",
    ) - value(
        before,
        "permitapi_portal_fetches_total",
        source="ladbs",
        operation="fetch",
        outcome="not_found",
    )
    assert not_found >= 1


async def test_queue_gauges_read_the_shared_database(
    client: httpx.AsyncClient, ctx: AppContext, clock: FrozenClock
) -> None:
    now = clock.now()
    async with ctx.transaction() as session:
        # Other tests share this database: end the deliveries they left pending.
        await session.execute(
            update(WebhookDelivery).where(WebhookDelivery.status == "pending").values(status="dead")
        )
        for minutes_ago in (3, 1):
            session.add(
                Operation(
                    operation_id=new_uuid(),
                    api_key_id=new_uuid(),
                    operation_type="permit_refresh",
                    status="pending",
                    permit_number=LADBS,
                    jurisdiction="ladbs",
                    force_refresh=False,
                    reserved_units=0,
                    attempts=0,
                    next_run_at=now - timedelta(minutes=minutes_ago),
                    created_at=now - timedelta(minutes=minutes_ago),
                )
            )
    scraped = await scrape(client)
    assert value(scraped, "permitapi_job_queue_depth", kind="operations") == 2
    assert value(scraped, "permitapi_job_oldest_due_age_seconds", kind="operations") == 180
    assert value(scraped, "permitapi_job_queue_depth", kind="webhook_deliveries") == 0
    # Every source reports its circuit, closed (0) while nothing failed.
    assert value(scraped, "permitapi_circuit_state", source="ladbs") == 0


@pytest.fixture
async def guarded_client(settings: Settings, clock: FrozenClock) -> httpx.AsyncClient:
    guarded = settings.model_copy(update={"metrics_token": SecretStr("scrape-me")})
    application = create_app(guarded, clock=clock)
    async with application.router.lifespan_context(application):
        transport = httpx.ASGITransport(app=application)
        async with httpx.AsyncClient(transport=transport, base_url="http://testserver") as http:
            yield http


async def test_a_metrics_token_guards_the_scrape(guarded_client: httpx.AsyncClient) -> None:
    refused = await guarded_client.get("/metrics")
    assert refused.status_code == 401
    assert refused.json()["code"] == "invalid_token"
    wrong = await guarded_client.get("/metrics", headers={"Authorization": "Bearer nope"})
    assert wrong.status_code == 401
    allowed = await guarded_client.get("/metrics", headers={"Authorization": "Bearer scrape-me"})
    assert allowed.status_code == 200
    assert "permitapi_http_requests_total" in allowed.text


async def test_watch_checks_and_daily_passes_are_queues_too(
    client: httpx.AsyncClient, ctx: AppContext, clock: FrozenClock
) -> None:
    now = clock.now()
    async with ctx.transaction() as session:
        await session.execute(delete(WatchedPermit))
        await session.execute(delete(JobLease))
        for number, minutes in (("A-1", -10), ("A-2", -4), ("A-3", 30)):
            session.add(
                WatchedPermit(
                    jurisdiction="ladbs",
                    permit_number=number,
                    next_check_at=now + timedelta(minutes=minutes),
                )
            )
        # Saved searches last completed 25 hours ago: due for an hour. permit_created
        # completed an hour ago: not due.
        session.add(JobLease(name="saved-searches", last_completed_at=now - timedelta(hours=25)))
        session.add(JobLease(name="permit-created", last_completed_at=now - timedelta(hours=1)))
    scraped = await scrape(client)
    assert value(scraped, "permitapi_job_queue_depth", kind="watch_checks") == 2
    assert value(scraped, "permitapi_job_oldest_due_age_seconds", kind="watch_checks") == 600
    assert value(scraped, "permitapi_job_queue_depth", kind="saved-searches") == 1
    assert value(scraped, "permitapi_job_oldest_due_age_seconds", kind="saved-searches") == 3600
    assert value(scraped, "permitapi_job_queue_depth", kind="permit-created") == 0
    async with ctx.transaction() as session:
        await session.execute(delete(WatchedPermit))
        await session.execute(delete(JobLease))
