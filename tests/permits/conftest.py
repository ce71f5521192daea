"""Fixtures for lookup tests: a fake portal plugged into the app's source gateway, and
helpers to read meters and create keys."""

from __future__ import annotations

import pytest
from sqlalchemy import text

from permitapi.account import service as accounts
from permitapi.account.plans import Meter
from permitapi.context import AppContext
from permitapi.usage import service as usage
from tests.support.fake_portal import FakePortal


@pytest.fixture(autouse=True)
async def clean_lookup_tables(ctx: AppContext) -> None:
    """The database lives for the session; lookups must not see earlier tests' permits."""
    async with ctx.transaction() as session:
        for table in ("permits", "operations", "domain_events", "coverage_observations"):
            await session.execute(text(f"DELETE FROM {table}"))


@pytest.fixture
def portal(ctx: AppContext) -> FakePortal:
    return FakePortal().install(ctx)


async def used(ctx: AppContext, raw_key: str) -> int:
    async with ctx.sessionmaker() as session:
        principal = await accounts.resolve_key(session, raw_key)
        assert principal is not None
        return (await usage.meter_state(session, principal, Meter.LOOKUP, ctx.clock.now())).used
