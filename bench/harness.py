"""Shared bench plumbing: a throw-away database, an account, server processes, and a small
HTTP/1.1 keep-alive load generator on raw asyncio streams (no wrk needed)."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "src"), str(ROOT)]

from tests.support import databases  # noqa: E402

from permitapi.account import service as accounts  # noqa: E402
from permitapi.account.plans import PlanName  # noqa: E402
from permitapi.db import migrate  # noqa: E402
from permitapi.db.engine import create_engine, create_sessionmaker  # noqa: E402
from permitapi.kit.clock import SystemClock  # noqa: E402


def arguments(description: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--db", choices=("sqlite", "postgresql"), default="sqlite")
    parser.add_argument("--duration", type=float, default=8.0, help="seconds per measurement")
    parser.add_argument("--connections", type=int, default=64)
    parser.add_argument("--latency", type=float, default=0.2, help="portal latency (s)")
    parser.add_argument("--n", type=int, default=50, help="concurrent identical misses")
    return parser.parse_args()


@contextlib.contextmanager
def database(kind: str) -> Iterator[str]:
    if kind == "sqlite":
        with tempfile.TemporaryDirectory() as scratch:
            yield databases.migrated(databases.create_sqlite_database(Path(scratch)))
        return
    name, url = databases.create_postgres_database()
    try:
        yield databases.migrated(url)
    finally:
        databases.drop_postgres_database(name)


def make_keys(url: str, count: int = 1) -> list[str]:
    """Enterprise live keys with overage (the bench app lifts their burst window)."""

    async def work() -> list[str]:
        engine = create_engine(url, pool_size=1)
        keys = []
        try:
            for _ in range(count):
                async with create_sessionmaker(engine)() as session, session.begin():
                    created = await accounts.create_account(
                        session,
                        plan=PlanName.ENTERPRISE,
                        discovery_addon=False,
                        overage_enabled=True,
                        now=SystemClock().now(),
                    )
                    keys.append(created.live_key)
            return keys
        finally:
            await engine.dispose()

    migrate.upgrade(url)
    return asyncio.run(work())


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextlib.contextmanager
def server(url: str, *, latency: float = 0.2, source_cap: int = 4) -> Iterator[int]:
    port = free_port()
    env = {
        **os.environ,
        "PYTHONPATH": f"{ROOT / 'src'}:{ROOT}",
        "PERMITAPI_DATABASE_URL": url,
        "PERMITAPI_ENVIRONMENT": "test",
        "BENCH_PORTAL_LATENCY": str(latency),
        "BENCH_SOURCE_CAP": str(source_cap),
    }
    command = [
        sys.executable, "-m", "uvicorn", "bench.app:create", "--factory",
        "--host", "127.0.0.1", "--port", str(port), "--workers", "1",
        "--no-access-log", "--log-level", "warning", "--loop", "uvloop", "--http", "httptools",
    ]  # fmt: skip
    process = subprocess.Popen(command, cwd=ROOT, env=env)
    try:
        deadline = time.monotonic() + 90
        while True:
            if process.poll() is not None:
                raise RuntimeError(f"bench server exited with {process.returncode}")
            if time.monotonic() > deadline:
                raise RuntimeError("bench server did not start within 90 s")
            try:
                with socket.create_connection(("127.0.0.1", port), 0.2):
                    break
            except OSError:
                time.sleep(0.1)
        yield port
    finally:
        process.terminate()
        process.wait(15)


@dataclass
class Stats:
    latencies: list[float] = field(default_factory=list)
    statuses: dict[int, int] = field(default_factory=dict)
    elapsed: float = 0.0

    @property
    def rps(self) -> float:
        return len(self.latencies) / self.elapsed if self.elapsed else 0.0

    def percentile(self, p: float) -> float:
        if not self.latencies:
            return float("nan")
        ordered = sorted(self.latencies)
        return ordered[min(len(ordered) - 1, int(p / 100 * len(ordered)))] * 1000

    def line(self, label: str) -> str:
        return (
            f"{label:28} {self.rps:9.0f} req/s  p50 {self.percentile(50):6.1f} ms  "
            f"p99 {self.percentile(99):6.1f} ms  statuses {self.statuses}"
        )


async def _request(
    reader: asyncio.StreamReader, writer: asyncio.StreamWriter, raw: bytes
) -> tuple[int, bytes]:
    writer.write(raw)
    head = await reader.readuntil(b"\r\n\r\n")
    status = int(head[9:12])
    length = 0
    for line in head.split(b"\r\n"):
        if line[:15].lower() == b"content-length:":
            length = int(line[15:])
    body = await reader.readexactly(length) if length else b""
    return status, body


def get(path: str, key: str | None = None, port: int = 0) -> bytes:
    extra = f"X-API-Key: {key}\r\n" if key else ""
    return f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n{extra}\r\n".encode()


def post_json(path: str, payload: object, key: str, port: int = 0) -> bytes:
    body = json.dumps(payload).encode()
    return (
        f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nX-API-Key: {key}\r\n"
        f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n"
    ).encode() + body


async def load(port: int, make: Callable[[int], bytes], connections: int, duration: float) -> Stats:
    """`connections` keep-alive connections sending back-to-back requests for `duration`;
    `make(i)` builds connection i's request."""
    stats = Stats()
    stop = time.perf_counter() + duration

    async def connection(index: int) -> None:
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        try:
            while time.perf_counter() < stop:
                started = time.perf_counter()
                status, _ = await _request(reader, writer, make(index))
                stats.latencies.append(time.perf_counter() - started)
                stats.statuses[status] = stats.statuses.get(status, 0) + 1
        finally:
            writer.close()

    started = time.perf_counter()
    await asyncio.gather(*(connection(i) for i in range(connections)))
    stats.elapsed = time.perf_counter() - started
    return stats


async def once(port: int, raw: bytes) -> tuple[int, bytes, float]:
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    try:
        started = time.perf_counter()
        status, body = await _request(reader, writer, raw)
        return status, body, time.perf_counter() - started
    finally:
        writer.close()


def median(values: list[float]) -> float:
    return statistics.median(values)
