"""GET /developers/status.json reflects an injected outage after one failed fetch, and recovers."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from typing import Any

import httpx
import pytest
from fastapi import FastAPI
from sqlalchemy import text
from starlette.applications import Starlette

from permitapi.app import create_app
from permitapi.config import Settings
from permitapi.context import AppContext
from permitapi.db.engine import create_engine, create_sessionmaker
from permitapi.kit.clock import FrozenClock
from permitapi.portalsim.app import create_sim_app
from permitapi.source_health import repository
from permitapi.source_health.recorder import DatabaseOutcomeRecorder
from permitapi.sources.base import NotFoundAtSource, PermitSnapshot, RetryLater
from permitapi.sources.gateway import SourceGateway
from permitapi.sources.registry import Jurisdiction, default_directory
from tests.sources.core.support import ECHO_FAMILIES, EchoAdapter, LoopbackServer
from tests.support.fake_portal import snapshot


@pytest.fixture(scope="module")
def sim() -> Iterator[tuple[LoopbackServer, Starlette]]:
    app = create_sim_app(
        default_directory(), permits_per_jurisdiction=5, latency_ms=0, families=ECHO_FAMILIES
    )
    with LoopbackServer(app) as server:
        yield server, app


@pytest.fixture
async def api(
    settings: Settings, clock: FrozenClock, sim: tuple[LoopbackServer, Starlette]
) -> AsyncIterator[tuple[FastAPI, AppContext]]:
    server, _ = sim
    configured = settings.model_copy(
        update={
            "portal_base_url": server.url,
            "source_max_attempts": 1,
            "source_read_timeout_seconds": 0.5,
        }
    )
    app = create_app(configured, clock=clock)
    async with app.router.lifespan_context(app):
        ctx: AppContext = app.state.ctx
        # The database is shared by the session: other suites' fetches (some on clocks set to
        # the real time) must not be this test's aggregates.
        async with ctx.transaction() as session:
            await session.execute(text("DELETE FROM source_fetches"))
        ctx.gateway = SourceGateway(
            ctx.http, ctx.gateway.recorder, adapters={"ladbs": EchoAdapter(ctx.http)}
        )
        yield app, ctx


async def status_of(app: FastAPI, slug: str) -> dict[str, Any]:
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://test") as client:
        response = await client.get("/developers/status.json")  # public: no key
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["window_seconds"] == 900
    assert len(body["jurisdictions"]) == len(default_directory())
    assert sum(body["summary"].values()) == len(default_directory())
    return next(item for item in body["jurisdictions"] if item["slug"] == slug)


async def control(server: LoopbackServer, method: str, path: str, **kwargs: Any) -> None:
    async with httpx.AsyncClient(base_url=server.url) as client:
        response = await client.request(method, path, **kwargs)
        assert response.status_code < 300, response.text


async def test_outage_is_reflected_after_one_failed_fetch_and_recovers(
    api: tuple[FastAPI, AppContext], sim: tuple[LoopbackServer, Starlette]
) -> None:
    app, ctx = api
    server, sim_app = sim
    ladbs = ctx.directory.get("ladbs")
    assert ladbs is not None
    number = sim_app.state.store.of("ladbs")[0].permit_number
    await control(server, "DELETE", "/_control/faults")

    await ctx.gateway.fetch_permit(ladbs, number)
    healthy = await status_of(app, "ladbs")
    assert healthy["status"] == "operational"
    assert healthy["last_success_at"] is not None
    assert healthy["circuit_state"] == "closed"

    await control(server, "POST", "/_control/faults", json={"source": "ladbs", "mode": "down"})
    with pytest.raises(RetryLater):
        await ctx.gateway.fetch_permit(ladbs, number)
    one_failure = await status_of(app, "ladbs")
    assert one_failure["status"] == "degraded"
    assert one_failure["consecutive_failures"] == 1
    assert one_failure["last_failure_reason"] == "down"
    assert one_failure["last_failure_at"] is not None

    for _ in range(2):
        with pytest.raises(RetryLater):
            await ctx.gateway.fetch_permit(ladbs, number)
    assert (await status_of(app, "ladbs"))["status"] == "down"

    await control(server, "DELETE", "/_control/faults")
    await ctx.gateway.fetch_permit(ladbs, number)
    recovered = await status_of(app, "ladbs")
    assert recovered["status"] == "operational"
    assert recovered["consecutive_failures"] == 0
    # Jurisdictions never fetched are listed too.
    untouched = await status_of(app, "aca:sandiego")
    assert untouched["status"] == "operational"
    assert untouched["sample_size"] == 0
    assert untouched["error_rate"] is None


async def test_open_circuit_is_down(api: tuple[FastAPI, AppContext]) -> None:
    app, ctx = api
    breaker = ctx.http.circuits.breaker("aca:sacramento")
    for _ in range(breaker.failure_threshold):
        breaker.record_failure()
    item = await status_of(app, "aca:sacramento")
    assert item["status"] == "down"
    assert item["circuit_state"] == "open"


async def test_outcomes_are_recorded_with_latency(
    api: tuple[FastAPI, AppContext], sim: tuple[LoopbackServer, Starlette]
) -> None:
    _, ctx = api
    _, sim_app = sim
    ladbs = ctx.directory.get("ladbs")
    assert ladbs is not None
    await ctx.gateway.fetch_permit(ladbs, sim_app.state.store.of("ladbs")[1].permit_number)
    async with ctx.sessionmaker() as session:
        aggregates = await repository.aggregates(session, ctx.clock.now())
    assert aggregates["ladbs"].window_total >= 1
    assert aggregates["ladbs"].last_success_at == ctx.clock.now()


async def test_recorder_never_raises(clock: FrozenClock, caplog: pytest.LogCaptureFixture) -> None:
    engine = create_engine("postgresql+asyncpg://postgres@127.0.0.1:1/unreachable", pool_size=1)
    try:
        recorder = DatabaseOutcomeRecorder(create_sessionmaker(engine), clock)
        await recorder.record("ladbs", "fetch", "success", None, 1.0)  # must not raise
        await recorder.record_many("ladbs", "fetch", [("success", None, 1.0)])
    finally:
        await engine.dispose()
    assert "could not record source outcome" in caplog.text
    assert "could not record 1 source outcomes" in caplog.text


class _BatchAdapter:
    """An adapter whose batch fetch ends in the given outcomes, one per number, in order."""

    def __init__(self, outcomes: list[PermitSnapshot | Exception]) -> None:
        self.outcomes = outcomes

    async def fetch_many(
        self, jurisdiction: Jurisdiction, numbers: list[str]
    ) -> dict[str, PermitSnapshot | Exception]:
        return dict(zip(numbers, self.outcomes, strict=True))


async def test_a_batch_records_every_outcome_in_one_write_in_order(
    api: tuple[FastAPI, AppContext],
) -> None:
    _, ctx = api
    anaheim = ctx.directory.get("aca:anaheim")
    assert anaheim is not None
    found = snapshot("aca:anaheim", "BLD2024-0001")
    outcomes: list[PermitSnapshot | Exception] = [
        RetryLater("aca:anaheim", "slow", reason="timeout"),
        found,
        NotFoundAtSource("aca:anaheim", "no such permit"),
        RetryLater("aca:anaheim", "maintenance page", reason="maintenance"),
    ]
    gateway = SourceGateway(ctx.http, ctx.gateway.recorder)
    gateway.register("aca", _BatchAdapter(outcomes))  # type: ignore[arg-type]
    async with ctx.sessionmaker() as session:
        before = await repository.aggregates(session, ctx.clock.now())
    results = await gateway.fetch_many(anaheim, ["A-1", "A-2", "A-3", "A-4"])
    assert list(results.values()) == outcomes
    async with ctx.sessionmaker() as session:
        after = (await repository.aggregates(session, ctx.clock.now()))["aca:anaheim"]
    earlier = before.get("aca:anaheim")
    assert after.window_total - (earlier.window_total if earlier else 0) == 4
    # Only the last outcome follows the batch's last healthy one (not_found): order kept.
    assert after.failures_since_success == 1
    assert after.last_failure_reason == "maintenance"
