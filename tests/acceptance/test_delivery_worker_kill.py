"""A `permitapi worker` SIGKILLed with deliveries in flight loses none: its lease on the
webhook lapses, a second worker sends what the first had not recorded (at-least-once: the
receiver may see a delivery_id twice, never zero times). Both engines."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import func, select

from permitapi.account import service as accounts
from permitapi.account.plans import PlanName
from permitapi.composition import build_context
from permitapi.config import Settings
from permitapi.event import service as events
from permitapi.webhook import service as webhooks
from permitapi.webhook.models import WebhookDelivery
from tests.conftest import TEST_SECRET
from tests.support.cli import cli_env, fresh_database, permitapi_command, run_cli
from tests.support.receiver import Answer, Receiver, running_receiver

pytestmark = pytest.mark.slow

EVENTS = 120
WORKER_ENV = {
    "PERMITAPI_SECRET_KEY": TEST_SECRET,
    "PERMITAPI_ALLOW_LOOPBACK_WEBHOOKS": "true",
    "PERMITAPI_DELIVERY_LEASE_SECONDS": "2",
    "PERMITAPI_LOG_FORMAT": "text",
}


@pytest.fixture(params=["sqlite", "postgresql"])
def database_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    made = fresh_database(request.param, tmp_path)
    url = next(made)
    migrated = run_cli("db", "upgrade", cwd=tmp_path, env=cli_env(url))
    assert migrated.returncode == 0, migrated.stderr
    yield url
    made.close()


def settings_for(url: str) -> Settings:
    return Settings(
        environment="test", database_url=url, secret_key=TEST_SECRET, allow_loopback_webhooks=True
    )


async def seed(url: str, receiver_url: str) -> set[str]:
    """A pro account, one webhook to the receiver and EVENTS events: the pending deliveries."""
    ctx = build_context(settings_for(url))
    try:
        async with ctx.transaction() as session:
            created = await accounts.create_account(
                session,
                plan=PlanName.PRO,
                discovery_addon=False,
                overage_enabled=False,
                now=ctx.clock.now(),
            )
            principal = await accounts.resolve_key(session, created.live_key)
            assert principal is not None
            await webhooks.register(
                session,
                principal,
                checked_url=receiver_url,
                events=["status_change"],
                jurisdiction_filter=None,
                now=ctx.clock.now(),
            )
        for index in range(EVENTS):
            async with ctx.transaction() as session:
                await events.emit(
                    session,
                    "status_change",
                    data={"n": index},
                    occurred_at=ctx.clock.now(),
                    recipients=[principal.api_key_id],
                    permit_number=f"P-{index}",
                    jurisdiction="ladbs",
                )
        async with ctx.sessionmaker() as session:
            rows = await session.execute(select(WebhookDelivery.delivery_id))
            return {row[0] for row in rows}
    finally:
        await ctx.gateway.aclose()
        await ctx.engine.dispose()


async def delivered_count(url: str) -> int:
    ctx = build_context(settings_for(url))
    try:
        async with ctx.sessionmaker() as session:
            result = await session.execute(
                select(func.count()).where(WebhookDelivery.status == "delivered")
            )
            return int(result.scalar_one())
    finally:
        await ctx.gateway.aclose()
        await ctx.engine.dispose()


def start_worker(url: str, workdir: Path) -> subprocess.Popen[str]:
    return subprocess.Popen(
        permitapi_command("worker"),
        cwd=workdir,
        env=cli_env(url, **WORKER_ENV),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        text=True,
    )


def distinct_ids(receiver: Receiver) -> set[str]:
    return {item.headers["webhook-id"] for item in receiver.on("/hook")}


def test_a_killed_worker_loses_no_delivery(database_url: str, tmp_path: Path) -> None:
    with running_receiver() as receiver:
        receiver.answer("/hook", Answer(delay_seconds=0.02))
        expected = asyncio.run(seed(database_url, receiver.url()))
        assert len(expected) == EVENTS
        first = start_worker(database_url, tmp_path)
        try:
            deadline = time.monotonic() + 60
            while len(receiver.on("/hook")) < 20:
                assert first.poll() is None, "the worker exited"
                assert time.monotonic() < deadline, "the worker delivered nothing"
                time.sleep(0.01)
            os.kill(first.pid, signal.SIGKILL)
            first.wait(timeout=10)
        finally:
            if first.poll() is None:
                first.kill()
        recorded_at_kill = asyncio.run(delivered_count(database_url))
        assert recorded_at_kill < EVENTS  # deliveries were in flight when it died
        second = start_worker(database_url, tmp_path)
        try:
            deadline = time.monotonic() + 90
            while asyncio.run(delivered_count(database_url)) < EVENTS:
                assert second.poll() is None, "the second worker exited"
                assert time.monotonic() < deadline, f"{len(distinct_ids(receiver))} of {EVENTS}"
                time.sleep(0.25)
        finally:
            second.terminate()
            second.wait(timeout=30)
        assert distinct_ids(receiver) == expected
