"""Throw-away databases: a SQLite file per session, or a fresh PostgreSQL database.

PostgreSQL must be reachable: the suite fails (never skips) without it.
"""

from __future__ import annotations

import asyncio
import os
import uuid
from pathlib import Path

import asyncpg

from permitapi.config import sqlite_url
from permitapi.db import migrate

POSTGRES_ADMIN_URL = os.environ.get(
    "PERMITAPI_TEST_POSTGRES_URL", "postgresql://postgres@127.0.0.1:5432/test"
)


def _async_url(dsn: str, database: str) -> str:
    base = dsn.rsplit("/", 1)[0].replace("postgresql://", "postgresql+asyncpg://", 1)
    return f"{base}/{database}"


async def _admin(statement: str) -> None:
    connection = await asyncpg.connect(POSTGRES_ADMIN_URL, timeout=10)
    try:
        await connection.execute(statement)
    finally:
        await connection.close()


def create_postgres_database() -> tuple[str, str]:
    name = f"permitapi_test_{os.getpid()}_{uuid.uuid4().hex[:8]}"
    asyncio.run(_admin(f'CREATE DATABASE "{name}"'))
    return name, _async_url(POSTGRES_ADMIN_URL, name)


def drop_postgres_database(name: str) -> None:
    asyncio.run(_admin(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))


def create_sqlite_database(directory: Path) -> str:
    return sqlite_url(directory / f"permitapi-{uuid.uuid4().hex[:8]}.db")


def migrated(url: str) -> str:
    migrate.upgrade(url)
    return url
