"""Fixtures: every database-backed test runs once on SQLite and once on PostgreSQL."""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import AsyncIterator, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

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
from tests.support.xdist_scopes import SHARED_UNITS, SharedServerScheduling, write_units

BACKENDS = ("sqlite", "postgresql")
TEST_SECRET = "test-secret-key-that-is-not-the-placeholder"
UNITS_DIR = pytest.StashKey[Path]()


def pytest_configure(config: pytest.Config) -> None:
    # In the controller of a `--dist loadscope` run (the test command's): the directory where
    # the workers write their shared-server units (tests/support/xdist_scopes.py).
    if config.getoption("dist", "no") == "loadscope" and not hasattr(config, "workerinput"):
        config.stash[UNITS_DIR] = Path(tempfile.mkdtemp(prefix="permitapi-units-"))


@pytest.hookimpl(optionalhook=True)
def pytest_configure_node(node: Any) -> None:
    units_dir = node.config.stash.get(UNITS_DIR, None)
    if units_dir is not None:
        node.workerinput[SHARED_UNITS] = str(units_dir)


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> SharedServerScheduling | None:
    """`--dist loadscope` with shared-server units; any other `--dist` is xdist's own."""
    units_dir = config.stash.get(UNITS_DIR, None)
    return None if units_dir is None else SharedServerScheduling(config, log, units_dir)


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    # trylast: after pytest has ordered the tests by their parametrised fixtures.
    write_units(config, items)


def pytest_unconfigure(config: pytest.Config) -> None:
    units_dir = config.stash.get(UNITS_DIR, None)
    if units_dir is not None:
        shutil.rmtree(units_dir, ignore_errors=True)


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
