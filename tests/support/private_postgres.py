"""A PostgreSQL server of a test's own (initdb in a temporary directory, its own port), for
tests that stop and restart the database: the shared server on 5432 is never touched."""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from tests.support.dev_server import free_port

PG_BIN = Path("/usr/lib/postgresql")


def _bin(name: str) -> str:
    versions = sorted(PG_BIN.iterdir()) if PG_BIN.exists() else []
    assert versions, "PostgreSQL server binaries not found under /usr/lib/postgresql"
    return str(versions[-1] / "bin" / name)


def _as_postgres(*command: str) -> subprocess.CompletedProcess[str]:
    # The server refuses to run as root; the package's `postgres` user owns the data directory.
    prefix = ["runuser", "-u", "postgres", "--"] if os.geteuid() == 0 else []
    return subprocess.run([*prefix, *command], capture_output=True, text=True, check=False)


@dataclass
class PrivatePostgres:
    data_dir: Path
    port: int

    @property
    def url(self) -> str:
        return f"postgresql+asyncpg://postgres@127.0.0.1:{self.port}/postgres"

    def _ctl(self, *args: str) -> None:
        done = _as_postgres(
            _bin("pg_ctl"),
            "-D",
            str(self.data_dir),
            "-o",
            f"-p {self.port} -k {self.data_dir} -c listen_addresses=127.0.0.1",
            "-l",
            str(self.data_dir / "server.log"),
            "-w",
            *args,
        )
        assert done.returncode == 0, done.stdout + done.stderr

    def start(self) -> None:
        self._ctl("start")

    def stop(self) -> None:
        self._ctl("-m", "fast", "stop")

    def ready(self) -> bool:
        probe = subprocess.run(
            [_bin("pg_isready"), "-h", "127.0.0.1", "-p", str(self.port)],
            capture_output=True,
            check=False,
        )
        return probe.returncode == 0


@contextmanager
def private_postgres() -> Iterator[PrivatePostgres]:
    # Directly under /tmp: pytest's own temporary directories are private to root, and the
    # server runs as `postgres`.
    root = Path(tempfile.mkdtemp(prefix="permitapi-pg-"))
    data_dir = root / "pgdata"
    data_dir.mkdir()
    if os.geteuid() == 0:
        shutil.chown(root, "postgres")
        shutil.chown(data_dir, "postgres")
    made = _as_postgres(_bin("initdb"), "-D", str(data_dir), "-A", "trust", "-U", "postgres")
    assert made.returncode == 0, made.stdout + made.stderr
    server = PrivatePostgres(data_dir, free_port())
    server.start()
    deadline = time.monotonic() + 30
    while not server.ready():
        assert time.monotonic() < deadline, "private PostgreSQL did not start"
        time.sleep(0.2)
    try:
        yield server
    finally:
        if server.ready():
            server.stop()
        shutil.rmtree(root, ignore_errors=True)
