"""Watch tests: the app in process, a fake portal plugged into the source gateway, a real
receiver on loopback. The database is shared by the session, so each test starts without
permits, watches, events or pending deliveries."""

from __future__ import annotations

import pytest
from fastapi import FastAPI
from sqlalchemy import text

from permitapi.context import AppContext
from tests.support.fake_portal import FakePortal
from tests.webhook.conftest import clock, receiver, settings  # noqa: F401 - shared fixtures

TABLES = ("permits", "watches", "watched_permits", "event_feed", "domain_events", "operations")


async def _clean(context: AppContext) -> None:
    async with context.transaction() as session:
        for table in TABLES:
            await session.execute(text(f"DELETE FROM {table}"))
        await session.execute(text("DELETE FROM job_leases WHERE name = 'watch-check'"))
        await session.execute(
            text("UPDATE webhook_deliveries SET status = 'dead' WHERE status = 'pending'")
        )


@pytest.fixture
async def ctx(app: FastAPI) -> AppContext:
    context: AppContext = app.state.ctx
    await _clean(context)
    return context


@pytest.fixture
def portal(ctx: AppContext) -> FakePortal:
    return FakePortal().install(ctx)
