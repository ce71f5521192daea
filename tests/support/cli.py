"""Running the real `permitapi` command in a process of its own, against a chosen database.

`run_cli` forks the command from this test process's pre-imported parent
(tests/support/prewarmed.py: one per pytest process, started at its first command, so one per
xdist worker) instead of starting an interpreter per command: the ~1.5-3 s import was most of
the CPU of every CLI test. `run_fresh_cli` starts `python -m permitapi` (or the installed
`permitapi` script) in a new interpreter, for the tests that prove the entry points
themselves.
"""

from __future__ import annotations

import atexit
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import permitapi
from tests.support import databases
from tests.support.prewarmed import Prewarmed

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


def console_script() -> Path:
    """The `permitapi` script pip installed beside this interpreter ([project.scripts])."""
    return Path(sys.executable).parent / "permitapi"


_parent: Prewarmed | None = None


def forking_parent() -> Prewarmed:
    """This process's pre-imported parent of CLI commands, started at the first call."""
    global _parent
    if _parent is None or not _parent.alive():
        close_forking_parent()
        _parent = Prewarmed(Path(tempfile.mkdtemp(prefix="permitapi-cli-")), cli_env(None))
    return _parent


def close_forking_parent() -> None:
    """Ends the parent, any child still running and their output files (at the end of the
    test session; a parent whose test process died ends when its stdin closes)."""
    global _parent
    if _parent is not None:
        _parent.close()
        shutil.rmtree(_parent.workdir, ignore_errors=True)
        _parent = None


atexit.register(close_forking_parent)


def run_cli(
    *args: str, cwd: Path, env: dict[str, str], timeout: float = 120
) -> subprocess.CompletedProcess[str]:
    """`permitapi *args` in a process forked from the pre-imported parent: exactly `env` as
    its environment, `cwd`, stdin on /dev/null, stdout and stderr apart; killed, and the test
    failed, after `timeout` seconds."""
    return forking_parent().run(*args, cwd=cwd, env=env, timeout=timeout)


def run_fresh_cli(
    command: list[str], *, cwd: Path, env: dict[str, str], timeout: float = 120
) -> subprocess.CompletedProcess[str]:
    """`command` (`permitapi_command(...)` or the console script) in a new interpreter."""
    return subprocess.run(
        command,
        cwd=cwd,
        env=env,
        stdin=subprocess.DEVNULL,
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
