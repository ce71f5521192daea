"""Starting a real `permitapi dev` server in a subprocess, in a throw-away working directory.

Shared by the black-box acceptance suites: `./var` is the server's own, the database is its
embedded SQLite default or a fresh PostgreSQL database (PERMITAPI_DATABASE_URL), and the keys
it prints on startup are parsed back.
"""

from __future__ import annotations

import re
import socket
import subprocess
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import httpx

from tests.support.cli import cli_env, fresh_database, permitapi_command, run_cli

STARTUP_SECONDS = 60
_KEY_LINE = re.compile(r"^\s*(live|sandbox) key\s+(sk_(?:live|test)_\S+)\s*$")
_ACCOUNT_LINE = re.compile(r"^(\w+)\s+account\s+(\S+)\s*$")


@dataclass
class DevServer:
    base_url: str
    workdir: Path
    env: dict[str, str]
    keys: dict[str, dict[str, str]] = field(default_factory=dict)
    sqlite: bool = True

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
    process = subprocess.Popen(
        permitapi_command("dev", "--port", str(port), *extra_args),
        cwd=workdir,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    output: list[str] = []
    reader = threading.Thread(
        target=lambda: output.extend(iter(process.stdout.readline, "")),  # type: ignore[union-attr]
        daemon=True,
    )
    reader.start()
    base_url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + STARTUP_SECONDS
        while True:
            assert process.poll() is None, "".join(output)
            assert time.monotonic() < deadline, "dev server did not start:\n" + "".join(output)
            try:
                if httpx.get(f"{base_url}/healthz", timeout=1).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            time.sleep(0.2)
        assert f"permitapi dev server: {base_url}" in "".join(output)
        keys = parse_keys(list(output))
        assert set(keys) == {"free", "pro"}, "".join(output)
        for account in keys.values():
            assert set(account) == {"account_id", "live_key", "sandbox_key"}
        yield DevServer(base_url, workdir, env, keys, sqlite=database_url is None)
    finally:
        process.terminate()
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        if databases is not None:
            databases.close()
