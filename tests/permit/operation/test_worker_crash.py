"""An operation survives a worker killed with SIGKILL mid-refresh: its lease expires and a
second `permitapi worker` process finishes it, settling and emitting operation_completed
exactly once. Real processes: `permitapi portal-sim` serves the portals (forked from the
pre-imported parent, tests/support/long_running.py), two `permitapi worker` processes, each a
new interpreter as an operator starts it, share the test's database."""

from __future__ import annotations

import asyncio
import signal
import subprocess
from collections.abc import Iterator
from datetime import UTC, datetime

import httpx
import pytest

from permitapi.config import Settings
from permitapi.context import AppContext
from permitapi.event import repository as events
from permitapi.kit.clock import FrozenClock
from permitapi.permit.operation import repository as operations
from tests.permit.helpers import used
from tests.support.accounts import make_account
from tests.support.cli import cli_env, permitapi_command
from tests.support.portal_sim import running_portal_sim

pytestmark = pytest.mark.slow
SLUG = "aca:sandiego"


@pytest.fixture(scope="module")
def simulator() -> Iterator[str]:
    with running_portal_sim() as url:
        yield url


def start_worker(settings: Settings, portal: str) -> subprocess.Popen[bytes]:
    env = cli_env(
        settings.database_url,
        PERMITAPI_PORTAL_BASE_URL=portal,
        PERMITAPI_OPERATION_LEASE_SECONDS="3",
        PERMITAPI_REFRESH_LEASE_SECONDS="3",
        PERMITAPI_WORKER_POLL_INTERVAL_SECONDS="0.1",
    )
    return subprocess.Popen(permitapi_command("worker"), env=env)


async def wait_for_status(ctx: AppContext, operation_id: str, wanted: str, seconds: float) -> None:
    deadline = asyncio.get_running_loop().time() + seconds
    while asyncio.get_running_loop().time() < deadline:
        async with ctx.sessionmaker() as session:
            operation = await operations.get(session, operation_id)
        if operation is not None and operation.status == wanted:
            return
        await asyncio.sleep(0.1)
    raise AssertionError(f"operation never reached {wanted}")


async def test_operation_survives_a_killed_worker(
    client: httpx.AsyncClient,
    ctx: AppContext,
    clock: FrozenClock,
    settings: Settings,
    simulator: str,
) -> None:
    clock.set(datetime.now(UTC))  # the worker processes run on the system clock
    async with httpx.AsyncClient(base_url=simulator) as sim:
        listed = (await sim.get("/_control/permits", params={"source": SLUG, "limit": 1})).json()
        number = listed["permits"][0]["permit_number"]
        # The first worker's fetch hangs (the portal answers after a minute)...
        await sim.post(
            "/_control/faults", json={"source": SLUG, "mode": "slow", "latency_ms": 60_000}
        )
        key = (await make_account(ctx, "pro")).live_key
        accepted = await client.get(
            f"/api/v1/permits/{number}/status",
            params={"jurisdiction": SLUG},
            headers={"X-API-Key": key},
        )
        assert accepted.status_code == 202, accepted.text
        operation_id = accepted.json()["operation_id"]

        doomed = start_worker(settings, simulator)
        try:
            await wait_for_status(ctx, operation_id, "running", 60)
            await asyncio.sleep(0.5)  # inside the portal fetch
            doomed.send_signal(signal.SIGKILL)
            doomed.wait(10)
        finally:
            doomed.kill()
        # ...and the portal is healthy again for the worker that takes over.
        await sim.delete("/_control/faults")
        survivor = start_worker(settings, simulator)
        try:
            await wait_for_status(ctx, operation_id, "succeeded", 60)
        finally:
            survivor.send_signal(signal.SIGTERM)
            survivor.wait(15)

    async with ctx.sessionmaker() as session:
        operation = await operations.get(session, operation_id)
        emitted = await events.of_type(session, "operation_completed")
    assert operation is not None
    assert operation.attempts == 2
    assert operation.result is not None
    assert operation.result["jurisdiction"] == SLUG
    assert operation.result["source"] == "live_scrape"
    assert [e.data["operation_id"] for e in emitted] == [operation_id]
    assert await used(ctx, key) == 1
