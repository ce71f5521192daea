"""Starting a real `permitapi dev` server in a process of its own (forked from a pre-imported
parent: tests/support/long_running.py), in a throw-away working directory.

Shared by the black-box acceptance suites: `./var` is the server's own, the database is its
embedded SQLite default or a fresh PostgreSQL database (PERMITAPI_DATABASE_URL), and the keys
it prints on startup are parsed back.
"""

from __future__ import annotations

import re
import socket
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from tests.support.cli import cli_env, fresh_database, run_cli
from tests.support.long_running import running

_KEY_LINE = re.compile(r"^\s*(live|sandbox) key\s+(sk_(?:live|test)_\S+)\s*$")
_ACCOUNT_LINE = re.compile(r"^(\w+)\s+account\s+(\S+)\s*$")


@dataclass
class DevServer:
    base_url: str
    workdir: Path
    env: dict[str, str]
    keys: dict[str, dict[str, str]] = field(default_factory=dict)
    sqlite: bool = True
    pid: int = 0  # the server process (its /proc/<pid>/status shows its memory)

    def cli(self, *args: str) -> subprocess.CompletedProcess[str]:
        return run_cli(*args, cwd=self.workdir, env=self.env)


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def parse_keys(lines: list[str]) -> dict[str, dict[str, str]]:
    keys: dict[str, dict[str, str]] = {}
    plan = None
    for line in lines:
        if account := _ACCOUNT_LINE.match(line):
            plan = account.group(1)
            keys[plan] = {"account_id": account.group(2)}
        elif (key := _KEY_LINE.match(line)) and plan is not None:
            keys[plan][f"{key.group(1)}_key"] = key.group(2)
    return keys


@contextmanager
def dev_server(
    backend: str, workdir: Path, *extra_args: str, env_overrides: dict[str, str] | None = None
) -> Iterator[DevServer]:
    """`permitapi dev --port <free> *extra_args` on `backend` (sqlite | postgresql), until the
    block ends; startup output is checked (address line, a free and a pro account).
    `env_overrides` adds settings (PERMITAPI_...) to the server's environment."""
    databases = fresh_database(backend, workdir) if backend == "postgresql" else None
    database_url = next(databases) if databases is not None else None
    env = {**cli_env(database_url), **(env_overrides or {})}
    port = free_port()
    base_url = f"http://127.0.0.1:{port}"
    try:
        with running(
            ["dev", "--port", str(port), *extra_args],
            cwd=workdir,
            env=env,
            ready_url=f"{base_url}/healthz",
        ) as started:
            output = started.text()
            assert f"permitapi dev server: {base_url}" in output
            keys = parse_keys(output.splitlines())
            assert set(keys) == {"free", "pro"}, output
            for account in keys.values():
                assert set(account) == {"account_id", "live_key", "sandbox_key"}
            yield DevServer(
                base_url,
                workdir,
                env,
                keys,
                sqlite=database_url is None,
                pid=started.pid,
            )
    finally:
        if databases is not None:
            databases.close()
