"""Fixtures: every database-backed test runs once on SQLite and once on PostgreSQL."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime

import httpx
import pytest
from fastapi import FastAPI

from permitapi.app import create_app
from permitapi.config import Settings
from permitapi.context import AppContext
from permitapi.kit.clock import FrozenClock
from tests.support import databases
from tests.support.cli import close_forking_parent
from tests.support.per_backend import PerBackend

BACKENDS = ("sqlite", "postgresql")
TEST_SECRET = "test-secret-key-that-is-not-the-placeholder"


def pytest_sessionfinish() -> None:
    # The CLI parent (tests/support/cli.py) and its output files end with the session.
    close_forking_parent()


@contextmanager
def migrated_database(backend: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    if backend == "sqlite":
        yield databases.migrated(databases.create_sqlite_database(tmp_path_factory.mktemp("db")))
        return
    name, url = databases.create_postgres_database()
    try:
        yield databases.migrated(url)
    finally:
        databases.drop_postgres_database(name)


@pytest.fixture(scope="session")
def migrated_databases(tmp_path_factory: pytest.TempPathFactory) -> Iterator[PerBackend[str]]:
    pool = PerBackend(lambda backend: migrated_database(backend, tmp_path_factory))
    yield pool
    pool.close()


@pytest.fixture(scope="session", params=BACKENDS)
def database_url(request: pytest.FixtureRequest, migrated_databases: PerBackend[str]) -> str:
    """Each backend's database is migrated once per session (per worker under xdist)."""
    return migrated_databases.get(request.param)


@pytest.fixture
def clock() -> FrozenClock:
    return FrozenClock(datetime(2026, 11, 22, 12, 0, tzinfo=UTC))


@pytest.fixture
def settings(database_url: str) -> Settings:
    return Settings(
        environment="test",
        database_url=database_url,
        secret_key=TEST_SECRET,
        database_pool_size=10,
    )


@pytest.fixture
async def app(settings: Settings, clock: FrozenClock) -> AsyncIterator[FastAPI]:
    application = create_app(settings, clock=clock)
    async with application.router.lifespan_context(application):
        yield application


@pytest.fixture
def ctx(app: FastAPI) -> AppContext:
    context: AppContext = app.state.ctx
    return context


@pytest.fixture
async def client(app: FastAPI) -> AsyncIterator[httpx.AsyncClient]:
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://testserver") as http:
        yield http
