"""Fixtures for lookup tests: a fake portal plugged into the app's source gateway, and
helpers to read meters and create keys."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
from sqlalchemy import text

from permitapi.account import service as accounts
from permitapi.account.plans import Meter
from permitapi.context import AppContext
from permitapi.usage import service as usage
from tests.support.fake_portal import FakePortal

LOOKUP_TABLES = (
    "permits",
    "operations",
    "domain_events",
    "coverage_observations",
    "source_fetches",
)


async def _clean(ctx: AppContext) -> None:
    async with ctx.transaction() as session:
        for table in LOOKUP_TABLES:
            await session.execute(text(f"DELETE FROM {table}"))


@pytest.fixture(autouse=True)
async def clean_lookup_tables(ctx: AppContext) -> AsyncIterator[None]:
    """The database lives for the session: lookups must not see earlier tests' rows, and
    other tests must not see theirs (the fake portal's outcomes land in source health)."""
    await _clean(ctx)
    yield
    await _clean(ctx)


@pytest.fixture
def portal(ctx: AppContext) -> FakePortal:
    return FakePortal().install(ctx)


async def used(ctx: AppContext, raw_key: str) -> int:
    async with ctx.sessionmaker() as session:
        principal = await accounts.resolve_key(session, raw_key)
        assert principal is not None
        return (await usage.meter_state(session, principal, Meter.LOOKUP, ctx.clock.now())).used
