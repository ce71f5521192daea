"""Alembic migrations, run programmatically (`permitapi db upgrade`, tests, `permitapi dev`)."""

from __future__ import annotations

from pathlib import Path

from alembic import command
from alembic.config import Config

from permitapi.db.engine import ensure_sqlite_directory

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
