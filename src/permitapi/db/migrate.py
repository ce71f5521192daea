"""Alembic migrations, run programmatically (`permitapi db upgrade`, tests, `permitapi dev`)."""

from __future__ import annotations

import asyncio
from pathlib import Path

from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import Connection
from sqlalchemy.engine.url import make_url

from permitapi.db.engine import create_engine, ensure_sqlite_directory

MIGRATIONS_DIR = Path(__file__).parent / "migrations"


def alembic_config(database_url: str) -> Config:
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS_DIR))
    # Passed as an attribute, not a main option: configparser would choke on '%' in passwords.
    config.attributes["database_url"] = database_url
    return config


def upgrade(database_url: str, revision: str = "head") -> None:
    ensure_sqlite_directory(database_url)
    command.upgrade(alembic_config(database_url), revision)


def downgrade(database_url: str, revision: str) -> None:
    command.downgrade(alembic_config(database_url), revision)


def head_revision() -> str | None:
    return ScriptDirectory.from_config(alembic_config("")).get_current_head()


def _read_revision(connection: Connection) -> str | None:
    return MigrationContext.configure(connection).get_current_revision()


async def _current(database_url: str) -> str | None:
    engine = create_engine(database_url, pool_size=1)
    try:
        async with engine.connect() as connection:
            return await connection.run_sync(_read_revision)
    finally:
        await engine.dispose()


def current_revision(database_url: str) -> str | None:
    """The revision the database is at (None: never migrated). A SQLite file that does not
    exist is reported as never migrated, not created."""
    parsed = make_url(database_url)
    database = parsed.database or ""
    on_disk = parsed.get_backend_name() == "sqlite" and database != ":memory:"
    if on_disk and not (database and Path(database).exists()):
        return None
    return asyncio.run(_current(database_url))
