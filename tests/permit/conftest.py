"""The database lives for the whole session: every permit test that takes `ctx` starts without
stored permits or coverage observations, so one test's representations never answer another's
reads. Pure tests (no `ctx`) stay off the database and run once, not once per backend."""

from __future__ import annotations

import pytest
from fastapi import FastAPI
from sqlalchemy import delete

from permitapi.context import AppContext
from permitapi.permit.models import CoverageObservation, PermitRecord


@pytest.fixture
async def ctx(app: FastAPI) -> AppContext:
    context: AppContext = app.state.ctx
    async with context.transaction() as session:
        await session.execute(delete(PermitRecord))
        await session.execute(delete(CoverageObservation))
    return context
