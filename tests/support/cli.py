"""Running the real `permitapi` command in a subprocess, against a chosen database."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import permitapi
from tests.support import databases

# The package under test, not whichever checkout the venv's editable install points at.
SRC_DIR = Path(permitapi.__file__).resolve().parent.parent


def cli_env(database_url: str | None, **extra: str) -> dict[str, str]:
    """The environment of a CLI subprocess: no PERMITAPI_* leaking in from the caller."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("PERMITAPI_")}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(SRC_DIR), env.get("PYTHONPATH")]))
    env["PYTHONUNBUFFERED"] = "1"
    # Four test workers share one PostgreSQL server (max_connections 100 by default): each
    # server, worker or command process keeps a small pool (5 + 5 overflow instead of 20 + 20),
    # which is plenty for one test's traffic. A test may still ask for more through `extra`.
    env["PERMITAPI_DATABASE_POOL_SIZE"] = "5"
    if database_url is not None:
        env["PERMITAPI_DATABASE_URL"] = database_url
    env.update(extra)
    return env


def permitapi_command(*args: str) -> list[str]:
    return [sys.executable, "-m", "permitapi", *args]


def run_cli(
    *args: str, cwd: Path, env: dict[str, str], timeout: float = 120
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        permitapi_command(*args),
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


def fresh_database(kind: str, directory: Path) -> Iterator[str]:
    """A never-migrated database URL: a SQLite file under `directory`, or a new PostgreSQL
    database dropped afterwards."""
    if kind == "sqlite":
        yield databases.create_sqlite_database(directory)
        return
    name, url = databases.create_postgres_database()
    try:
        yield url
    finally:
        databases.drop_postgres_database(name)
