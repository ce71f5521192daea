"""An operation survives a worker killed with SIGKILL mid-refresh: its lease expires and a
second worker process finishes it, settling and emitting operation_completed exactly once."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path

import httpx
import pytest

from permitapi.config import Settings
from permitapi.context import AppContext
from permitapi.event import repository as events
from permitapi.kit.clock import FrozenClock
from permitapi.operation import repository as operations
from tests.permits.conftest import used
from tests.support.accounts import make_account

ROOT = Path(__file__).resolve().parents[2]
NUMBER = "BLD24-00777"
SLUG = "aca:sandiego"


def start_worker(settings: Settings, latency: float) -> subprocess.Popen[bytes]:
    env = {
        **os.environ,
        "PYTHONPATH": f"{ROOT / 'src'}:{ROOT}",
        "PERMITAPI_DATABASE_URL": settings.database_url,
        "PERMITAPI_ENVIRONMENT": "test",
        "PERMITAPI_OPERATION_LEASE_SECONDS": "2",
        "PERMITAPI_REFRESH_LEASE_SECONDS": "2",
        "PERMITAPI_WORKER_POLL_INTERVAL_SECONDS": "0.1",
        "FAKE_PORTAL_LATENCY": str(latency),
        "FAKE_PERMITS": f"{SLUG}={NUMBER}",
    }
    return subprocess.Popen([sys.executable, "-m", "tests.support.fake_worker"], cwd=ROOT, env=env)


async def wait_for_status(ctx: AppContext, operation_id: str, wanted: str, seconds: float) -> None:
    deadline = asyncio.get_running_loop().time() + seconds
    while asyncio.get_running_loop().time() < deadline:
        async with ctx.sessionmaker() as session:
            operation = await operations.get(session, operation_id)
        if operation is not None and operation.status == wanted:
            return
        await asyncio.sleep(0.1)
    raise AssertionError(f"operation never reached {wanted}")


@pytest.mark.slow
async def test_operation_survives_a_killed_worker(
    client: httpx.AsyncClient, ctx: AppContext, clock: FrozenClock, settings: Settings
) -> None:
    clock.set(datetime.now(UTC))  # the worker processes run on the system clock
    key = (await make_account(ctx, "pro")).live_key
    accepted = await client.get(
        f"/api/v1/permits/{NUMBER}/status",
        params={"jurisdiction": SLUG},
        headers={"X-API-Key": key},
    )
    assert accepted.status_code == 202
    operation_id = accepted.json()["operation_id"]

    doomed = start_worker(settings, latency=60)
    try:
        await wait_for_status(ctx, operation_id, "running", 30)
        doomed.send_signal(signal.SIGKILL)
        doomed.wait(10)
    finally:
        doomed.kill()
    survivor = start_worker(settings, latency=0)
    try:
        await wait_for_status(ctx, operation_id, "succeeded", 30)
    finally:
        survivor.send_signal(signal.SIGTERM)
        survivor.wait(10)

    async with ctx.sessionmaker() as session:
        operation = await operations.get(session, operation_id)
        emitted = await events.of_type(session, "operation_completed")
    assert operation is not None
    assert operation.attempts == 2
    assert operation.result is not None
    assert operation.result["permit_number"] == NUMBER
    assert [e.data["operation_id"] for e in emitted] == [operation_id]
    assert await used(ctx, key) == 1
