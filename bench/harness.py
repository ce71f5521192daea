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
from collections.abc import Callable, Coroutine, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import uvloop

T = TypeVar("T")
ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "src"), str(ROOT)]

from tests.support import databases  # noqa: E402
from tests.support.portal_http import in_process_http as in_process_http  # noqa: E402

from permitapi.account import service as accounts  # noqa: E402
from permitapi.account.plans import PlanName  # noqa: E402
from permitapi.db import migrate  # noqa: E402
from permitapi.db.engine import create_engine, create_sessionmaker  # noqa: E402
from permitapi.kit.clock import SystemClock  # noqa: E402


def arguments(
    description: str,
    *,
    rounds: int | None = None,
    warmup: float | None = None,
    extra: Callable[[argparse.ArgumentParser], None] | None = None,
) -> argparse.Namespace:
    """The common options; `--rounds` and `--warmup` (with these defaults) only for a script
    that has rounds or warm-up loads, and `extra` adds a script's own. The defaults are the
    real bench; tests/bench/test_bench_smoke.py shrinks them to run every step once."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--db", choices=("sqlite", "postgresql"), default="sqlite")
    parser.add_argument("--duration", type=float, default=8.0, help="seconds per measurement")
    parser.add_argument("--connections", type=int, default=64)
    parser.add_argument("--latency", type=float, default=0.2, help="portal latency (s)")
    parser.add_argument("--n", type=int, default=50, help="concurrent identical misses")
    parser.add_argument("--requests", type=int, default=100_000, help="soak requests (RSS)")
    if rounds is not None:
        parser.add_argument("--rounds", type=_positive_int, default=rounds, help="rounds")
    if warmup is not None:
        parser.add_argument(
            "--warmup",
            type=float,
            default=warmup,
            help="seconds of each unmeasured load (warm-ups, soak slices)",
        )
    if extra is not None:
        extra(parser)
    return parser.parse_args()


def _positive_int(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError("must be at least 1")
    return value


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


def _wait_listening(process: subprocess.Popen[bytes], port: int, what: str) -> None:
    deadline = time.monotonic() + 90
    while True:
        if process.poll() is not None:
            raise RuntimeError(f"{what} exited with {process.returncode}")
        if time.monotonic() > deadline:
            raise RuntimeError(f"{what} did not start within 90 s")
        try:
            with socket.create_connection(("127.0.0.1", port), 0.2):
                return
        except OSError:
            time.sleep(0.1)


@contextlib.contextmanager
def uvicorn_app(
    factory: str, env: dict[str, str], what: str, workers: int = 1
) -> Iterator[Process]:
    port = free_port()
    command = [
        sys.executable, "-m", "uvicorn", factory, "--factory",
        "--host", "127.0.0.1", "--port", str(port), "--workers", str(workers),
        "--no-access-log", "--log-level", "warning", "--loop", "uvloop", "--http", "httptools",
    ]  # fmt: skip
    full_env = {**os.environ, "PYTHONPATH": f"{ROOT / 'src'}:{ROOT}", **env}
    process = subprocess.Popen(command, cwd=ROOT, env=full_env)
    try:
        _wait_listening(process, port, what)
        yield Process(port, process.pid)
    finally:
        process.terminate()
        process.wait(15)


@dataclass(frozen=True)
class Process:
    port: int
    pid: int

    def cpu_seconds(self) -> float:
        """User + system CPU time so far of the process and its children (uvicorn's worker
        processes when it runs several), all threads."""
        return sum(_cpu_of(pid) for pid in _tree(self.pid))


def _cpu_of(pid: int) -> float:
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except FileNotFoundError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _tree(pid: int) -> list[int]:
    try:
        children = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
    except FileNotFoundError:
        return [pid]
    return [pid, *(found for child in children for found in _tree(int(child)))]


@contextlib.contextmanager
def simulator(latency: float, ladbs_permits: int = 400) -> Iterator[Process]:
    """The portal simulator (`bench/sim.py`) in its own process, every request delayed by
    `latency` seconds."""
    env = {
        "BENCH_SIM_LATENCY_MS": str(round(latency * 1000)),
        "BENCH_SIM_LADBS_PERMITS": str(ladbs_permits),
    }
    with uvicorn_app("bench.sim:create", env, "portal simulator") as sim:
        yield sim


@contextlib.contextmanager
def server(
    url: str,
    sim: Process,
    policies: dict[str, dict[str, float]] | None = None,
    *,
    workers: int = 1,
    redis_url: str | None = None,
) -> Iterator[Process]:
    """The API (`bench/app.py`) on `url`, every portal pointed at the simulator `sim`;
    `policies` is PERMITAPI_SOURCE_POLICIES (per platform or slug); `workers` API processes
    behind one port (uvicorn's), sharing `redis_url` when given."""
    env = {
        "PERMITAPI_DATABASE_URL": url,
        "PERMITAPI_ENVIRONMENT": "test",
        "PERMITAPI_PORTAL_BASE_URL": f"http://127.0.0.1:{sim.port}",
        "PERMITAPI_SOURCE_POLICIES": json.dumps(policies or {}),
    }
    if redis_url:
        env["PERMITAPI_REDIS_URL"] = redis_url
        env["PERMITAPI_REDIS_NAMESPACE"] = f"permitapi-bench-{os.getpid()}"
    with uvicorn_app("bench.app:create", env, "bench server", workers) as process:
        yield process


def sim_get(sim: Process, path: str, method: str = "GET") -> object:
    request = f"{method} {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 0\r\n\r\n"
    status, body, _ = asyncio.run(once(sim.port, request.encode()))
    assert status == 200, body
    return json.loads(body)


def sim_permits(sim: Process, source: str = "ladbs") -> list[str]:
    """Permit numbers the simulator holds for `source`."""
    listed = sim_get(sim, f"/_control/permits?source={source}&limit=10000")
    assert isinstance(listed, dict)
    return [item["permit_number"] for item in listed["permits"]]


def sim_requests(sim: Process, reset: bool = False) -> dict[str, int]:
    counts = sim_get(sim, "/_bench/requests", "POST" if reset else "GET")
    assert isinstance(counts, dict)
    return counts


@dataclass
class Stats:
    latencies: list[float] = field(default_factory=list)
    finished: list[float] = field(default_factory=list)  # completion times (perf_counter)
    statuses: dict[int, int] = field(default_factory=dict)
    elapsed: float = 0.0
    generator_cpu: float = 0.0  # CPU seconds the load generator (this process) used
    server_cpu: float | None = None  # CPU seconds the server process used, when known

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

    def stalls(self, threshold_ms: float = 100.0) -> str:
        """Where the slow requests are: stalls (many at once) or spread out."""
        slow = [f for f, lat in zip(self.finished, self.latencies, strict=True)
                if lat * 1000 > threshold_ms]  # fmt: skip
        if not slow:
            return f"no request over {threshold_ms:.0f} ms"
        buckets: dict[int, int] = {}
        origin = min(self.finished)
        for moment in slow:
            second = int((moment - origin) * 4)
            buckets[second] = buckets.get(second, 0) + 1
        busiest = sorted(buckets.items(), key=lambda kv: -kv[1])[:5]
        return (
            f"{len(slow)} requests over {threshold_ms:.0f} ms, in {len(buckets)} of "
            f"{int(self.elapsed * 4) + 1} quarter-seconds; busiest: "
            + ", ".join(f"t={b / 4:.2f}s:{n}" for b, n in busiest)
        )

    def cpu_line(self, label: str) -> str:
        """CPU used during the run, in cores (1.00 = one core busy the whole time)."""
        server = "?" if self.server_cpu is None else f"{self.server_cpu / self.elapsed:.2f}"
        return (
            f"{label:28} CPU: load generator {self.generator_cpu / self.elapsed:.2f} cores, "
            f"server {server} cores (of 2)"
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


async def load(
    port: int,
    make: Callable[[int], bytes],
    connections: int,
    duration: float,
    server: Process | None = None,
) -> Stats:
    """`connections` keep-alive connections sending back-to-back requests for `duration`;
    `make(i)` builds connection i's request. Records this process's CPU time and, given the
    `server` process, the server's."""
    stats = Stats()
    cpu_before = time.process_time()
    server_before = server.cpu_seconds() if server else 0.0
    stop = time.perf_counter() + duration

    async def connection(index: int) -> None:
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        try:
            while time.perf_counter() < stop:
                started = time.perf_counter()
                status, _ = await _request(reader, writer, make(index))
                done = time.perf_counter()
                stats.latencies.append(done - started)
                stats.finished.append(done)
                stats.statuses[status] = stats.statuses.get(status, 0) + 1
        finally:
            writer.close()

    started = time.perf_counter()
    await asyncio.gather(*(connection(i) for i in range(connections)))
    stats.elapsed = time.perf_counter() - started
    stats.generator_cpu = time.process_time() - cpu_before
    if server is not None:
        stats.server_cpu = server.cpu_seconds() - server_before
    return stats


def run(coroutine: Coroutine[Any, Any, T]) -> T:
    """Run the load generator on uvloop (about half the CPU of the default loop per request,
    which matters on 2 cores shared with the server under test)."""
    return uvloop.run(coroutine)


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
