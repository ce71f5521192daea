"""The anonymous demo: keyless status and batch calls answered from the curated dataset, with
a per-address cap over a rolling 24 hours, and the dataset itself."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack

import httpx
import pytest
from fastapi import FastAPI
from sqlalchemy import text

from permitapi.app import create_app
from permitapi.config import Settings
from permitapi.context import AppContext
from permitapi.kit.clock import FrozenClock
from permitapi.permit.lookup.sandbox.dataset import demo_permits, example_numbers
from permitapi.permit.lookup.status_record import STATUS_PHASES, status_phase
from permitapi.sources.aca.status import table_for
from permitapi.sources.epicla.status import EPICLA_STATUS
from permitapi.sources.ladbs.status import LADBS_STATUS_TABLE
from tests.support.problems import assert_problem
from tests.support.shared_redis import REDIS_URL

CURATED = "21030-20000-00256"


def client_at(app: FastAPI, address: str, **headers: str) -> httpx.AsyncClient:
    transport = httpx.ASGITransport(app=app, client=(address, 40000))
    return httpx.AsyncClient(transport=transport, base_url="http://testserver", headers=headers)


async def meter_rows(ctx: AppContext) -> int:
    async with ctx.sessionmaker() as session:
        return int((await session.execute(text("SELECT COUNT(*) FROM usage_meters"))).scalar_one())


async def test_a_keyless_lookup_is_a_demo_answer(app: FastAPI, ctx: AppContext) -> None:
    await ctx.burst.reset()
    before = await meter_rows(ctx)
    async with client_at(app, "198.51.100.7") as client:
        answered = await client.get(f"/api/v1/permits/{CURATED}/status")
        assert answered.status_code == 200, answered.text
        assert answered.headers["x-demo-mode"] == "true"
        assert "x-sandbox-mode" not in answered.headers
        assert answered.headers["x-ratelimit-limit"] == "30"
        assert answered.headers["x-ratelimit-remaining"] == "29"
        assert int(answered.headers["x-ratelimit-reset"]) > 0
        body = answered.json()
        assert body["permit_number"] == CURATED
        assert body["source"] == "cached"
        batch = await client.post(
            "/api/v1/permits/batch-status",
            json={"permit_numbers": [CURATED, "PMT-3200001", "hello"]},
        )
        assert batch.status_code == 200
        assert batch.headers["x-ratelimit-remaining"] == "28"  # a batch is one call
        assert len(batch.json()["results"]) == 2
        # Endpoints that need a key still say so.
        for path in (f"/api/v1/permits/{CURATED}/inspections", "/api/v1/events", "/api/v1/usage"):
            assert_problem(await client.get(path), 401, "invalid_api_key")
        assert_problem(
            await client.get(f"/api/v1/permits/{CURATED}/status", params={"force_refresh": "1"}),
            403,
            "force_refresh_not_available",
        )
    assert await meter_rows(ctx) == before


async def test_the_cap_is_per_address_over_24_hours(app: FastAPI, ctx: AppContext) -> None:
    await ctx.burst.reset()
    async with client_at(app, "198.51.100.8") as busy, client_at(app, "198.51.100.9") as other:
        for call in range(30):
            served = await busy.get(f"/api/v1/permits/{CURATED}/status")
            assert served.status_code == 200, (call, served.text)
        refused = await busy.get(f"/api/v1/permits/{CURATED}/status")
        body = assert_problem(refused, 429, "demo_limit_exceeded")
        assert int(refused.headers["retry-after"]) > 23 * 3600
        assert refused.headers["x-ratelimit-remaining"] == "0"
        assert refused.headers["x-demo-mode"] == "true"
        assert body["retry_after_seconds"] == int(refused.headers["retry-after"])
        assert (await other.get(f"/api/v1/permits/{CURATED}/status")).status_code == 200


@pytest.fixture
async def proxied_app(app: FastAPI) -> AsyncIterator[FastAPI]:
    ctx: AppContext = app.state.ctx
    original = ctx.settings
    ctx.settings = original.model_copy(update={"trusted_proxies": ["10.0.0.0/8"]})
    yield app
    ctx.settings = original


async def test_forwarded_addresses_count_only_behind_a_trusted_proxy(
    proxied_app: FastAPI, ctx: AppContext
) -> None:
    await ctx.burst.reset()
    path = f"/api/v1/permits/{CURATED}/status"
    async with client_at(proxied_app, "10.1.2.3") as proxy:
        first = await proxy.get(path, headers={"x-forwarded-for": "6.6.6.6, 203.0.113.1"})
        second = await proxy.get(path, headers={"x-forwarded-for": "203.0.113.2"})
        again = await proxy.get(path, headers={"x-forwarded-for": "7.7.7.7, 203.0.113.1"})
    assert first.headers["x-ratelimit-remaining"] == "29"
    assert second.headers["x-ratelimit-remaining"] == "29"  # another client behind the proxy
    assert again.headers["x-ratelimit-remaining"] == "28"  # the client's own entry counts
    # An untrusted peer's X-Forwarded-For is ignored: it is counted as itself.
    async with client_at(proxied_app, "192.0.2.50") as direct:
        spoofed = [
            await direct.get(path, headers={"x-forwarded-for": f"203.0.113.{n}"}) for n in (3, 4)
        ]
    assert [r.headers["x-ratelimit-remaining"] for r in spoofed] == ["29", "28"]


def test_the_dataset_covers_every_family_status_and_phase() -> None:
    permits = demo_permits()
    assert {p.jurisdiction for p in permits} == {"ladbs", "epicla", "aca:sandiego"}
    tables = {
        "ladbs": LADBS_STATUS_TABLE,
        "epicla": EPICLA_STATUS,
        "aca:sandiego": table_for("aca:sandiego"),
    }
    for permit in permits:
        # The claimed status is what the family's own table makes of the portal's text.
        assert tables[permit.jurisdiction].normalize(permit.raw_status) == permit.status, permit
    assert {status_phase(p.status.value) for p in permits} == set(STATUS_PHASES)
    produced = {
        status for table in tables.values() for status in map(table.normalize, table.raw_values())
    }
    assert {p.status for p in permits} >= produced
    assert any(p.inspections and p.history for p in permits)
    assert len({p.permit_number for p in permits}) == len(permits)


async def test_the_example_numbers_show_the_error_answers(app: FastAPI, ctx: AppContext) -> None:
    await ctx.burst.reset()
    examples = example_numbers()
    async with client_at(app, "198.51.100.20") as client:
        ambiguous = await client.get(f"/api/v1/permits/{examples['ambiguous']}/status")
        assert ambiguous.status_code == 300
        assert ambiguous.json()["candidates"]
        missing = await client.get(f"/api/v1/permits/{examples['not_found']}/status")
        assert_problem(missing, 404, "permit_not_found")
        unknown = await client.get(f"/api/v1/permits/{examples['unknown_format']}/status")
        assert_problem(unknown, 404, "jurisdiction_not_supported")
        for permit in demo_permits():
            found = await client.get(
                f"/api/v1/permits/{permit.permit_number}/status",
                params={"jurisdiction": permit.jurisdiction},
            )
            assert found.status_code == 200, found.text
            assert found.json()["status_phase"] == status_phase(permit.status.value)


async def test_two_instances_share_the_demo_cap_through_redis(
    settings: Settings, clock: FrozenClock
) -> None:
    shared = settings.model_copy(
        update={
            "redis_url": REDIS_URL,
            "redis_namespace": f"permitapi-test-{uuid.uuid4().hex}",
            "demo_calls_per_day": 4,
        }
    )
    async with AsyncExitStack() as stack:
        clients = []
        for _ in range(2):
            app = create_app(shared, clock=clock)
            await stack.enter_async_context(app.router.lifespan_context(app))
            clients.append(await stack.enter_async_context(client_at(app, "198.51.100.30")))
        path = f"/api/v1/permits/{CURATED}/status"
        remaining = []
        for call in range(4):
            served = await clients[call % 2].get(path)
            assert served.status_code == 200, served.text
            remaining.append(served.headers["x-ratelimit-remaining"])
        assert remaining == ["3", "2", "1", "0"]
        assert_problem(await clients[0].get(path), 429, "demo_limit_exceeded")
        assert_problem(await clients[1].get(path), 429, "demo_limit_exceeded")
