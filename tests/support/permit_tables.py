"""Fixtures of the permit tests, shared by the folders whose tests run lookups (each conftest
re-exports them). The database lives for the whole session, so every permit test that touches
it starts and ends without stored permits, operations, events, coverage observations or source
health rows: one test's representations never answer another's reads, and the fake portal's
outcomes never reach other suites' source health. Pure tests (nothing depending on `app`) stay
off the database and run once, not once per backend.
"""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
from fastapi import FastAPI
from sqlalchemy import text

from permitapi.context import AppContext
from tests.support.fake_portal import FakePortal

PERMIT_TABLES = (
    "permits",
    "operations",
    "domain_events",
    "coverage_observations",
    "source_fetches",
)


async def _clean(context: AppContext) -> None:
    async with context.transaction() as session:
        for table in PERMIT_TABLES:
            await session.execute(text(f"DELETE FROM {table}"))


@pytest.fixture
async def ctx(app: FastAPI) -> AsyncIterator[AppContext]:
    context: AppContext = app.state.ctx
    await _clean(context)
    yield context
    await _clean(context)


@pytest.fixture(autouse=True)
def clean_permit_tables(request: pytest.FixtureRequest) -> None:
    """Database-backed tests get the cleaning `ctx` even when they only ask for `client` or
    `app`."""
    if "app" in request.fixturenames:
        request.getfixturevalue("ctx")


@pytest.fixture
def portal(ctx: AppContext) -> FakePortal:
    """A fake portal plugged into the app's source gateway."""
    return FakePortal().install(ctx)
