"""The service's request path against a plain FastAPI app started in the same run.

Measures, at 64 keep-alive connections: the plain app's bare endpoint (the baseline), the
service's own bare endpoint (the same handler behind the service's middleware and routing),
and a cached status lookup (auth, burst window, meter reservation, cache read, full record),
taking turns in four rounds (`--rounds`; ratios: the median of the rounds' ratios, so that a
slow spell of a shared machine does not fall on one measurement only);
then the API process's resident memory after `--requests` more cached lookups. Targets:
bare >= 0.85x the plain app, cached lookup >= 0.5x with p99 <= 25 ms, RSS <= 200 MB.
On PostgreSQL it then compares two API processes with one (both sharing Redis, as a scaled-out
deployment does), printing where the two cores went: load generator, API processes, PostgreSQL.

    python bench/request_path.py --db sqlite|postgresql [--duration 8] [--connections 64]
        [--requests 100000] [--rounds 4] [--warmup 2]

`--duration` is split over the rounds; `--warmup` is the length of each unmeasured load (the
warm-ups before the rounds and before each scale-out measurement, and each slice of the soak).
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from harness import (
    Process,
    Stats,
    arguments,
    database,
    get,
    load,
    make_keys,
    median,
    once,
    run,
    server,
    sim_permits,
    simulator,
    uvicorn_app,
)


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


REDIS_URL = os.environ.get("BENCH_REDIS_URL", "redis://127.0.0.1:6379/12")
ROUNDS = 4


def postgres_cpu_seconds() -> float:
    """CPU time used so far by every process named postgres on the machine."""
    total = 0.0
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            text = stat.read_text()
        except OSError:
            continue
        name, _, rest = text.partition(" (")[2].partition(") ")
        if name == "postgres":
            fields = rest.split()
            total += (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    return total


def scale_out(url: str, sim: Process, keys: list[str], permit: str, args: Any) -> list[str]:
    """Cached lookups served by one API process, then by two, both on Redis: report lines."""
    path = f"/api/v1/permits/{permit}/status"
    results: dict[int, tuple[Stats, float]] = {}
    for workers in (1, 2):
        with server(url, sim, workers=workers, redis_url=REDIS_URL) as api:
            requests = [get(path, key, api.port) for key in keys]

            def lookup(i: int, requests: list[bytes] = requests) -> bytes:
                return requests[i]

            run(load(api.port, lookup, args.connections, args.warmup))
            pg_before = postgres_cpu_seconds()
            stats = run(load(api.port, lookup, args.connections, args.duration, api))
            results[workers] = (stats, postgres_cpu_seconds() - pg_before)
    lines = []
    for workers, (stats, pg_cpu) in results.items():
        label = f"{workers} API process{'es' if workers > 1 else ''} + Redis"
        lines.append(stats.line(label))
        lines.append(stats.cpu_line(label) + f", PostgreSQL {pg_cpu / stats.elapsed:.2f} cores")
    one, two = results[1][0], results[2][0]
    lines.append(f"two API processes / one: {two.rps / one.rps:.2f}")
    return lines


def combined(rounds: list[Stats]) -> Stats:
    """The rounds of one measurement as one: every latency, the whole time and CPU."""
    total = Stats()
    for part in rounds:
        total.latencies += part.latencies
        total.finished += part.finished
        for status, count in part.statuses.items():
            total.statuses[status] = total.statuses.get(status, 0) + count
        total.elapsed += part.elapsed
        total.generator_cpu += part.generator_cpu
        total.server_cpu = (total.server_cpu or 0.0) + (part.server_cpu or 0.0)
    return total


def median_ratio(parts: list[Stats], baselines: list[Stats]) -> float:
    return median([part.rps / base.rps for part, base in zip(parts, baselines, strict=True)])


def main() -> None:
    args = arguments(__doc__ or "", rounds=ROUNDS, warmup=2.0)
    total_requests = args.requests
    rounds = args.rounds
    slice_seconds = args.duration / rounds
    with (
        database(args.db) as url,
        simulator(latency=0.01, ladbs_permits=20) as sim,
        uvicorn_app("bench.plain:create", {}, "plain FastAPI app") as plain,
    ):
        permit = sim_permits(sim)[0]
        keys = make_keys(url, args.connections)
        bare_plain = get("/bench/bare", None, plain.port)
        with server(url, sim) as api:
            path = f"/api/v1/permits/{permit}/status"
            status, body, _ = run(once(api.port, get(path, keys[0], api.port)))
            assert status == 200, body
            bare_app = get("/bench/bare", None, api.port)
            lookups = [get(path, key, api.port) for key in keys]
            run(load(plain.port, lambda _i: bare_plain, args.connections, args.warmup))
            run(load(api.port, lambda _i: bare_app, args.connections, args.warmup))
            run(load(api.port, lambda i: lookups[i], args.connections, args.warmup))
            # The three measurements take turns in short rounds, so that a slow spell of this
            # shared machine lands on all of them rather than on one.
            baselines, bares, cacheds = [], [], []

            def measure(port: int, make: Callable[[int], bytes], process: Process) -> Stats:
                return run(load(port, make, args.connections, slice_seconds, process))

            for _ in range(rounds):
                baselines.append(measure(plain.port, lambda _i: bare_plain, plain))
                bares.append(measure(api.port, lambda _i: bare_app, api))
                cacheds.append(measure(api.port, lambda i: lookups[i], api))
            baseline, bare, cached = combined(baselines), combined(bares), combined(cacheds)
            rss_before = rss_mb(api.pid)
            began = time.perf_counter()
            sent = 0
            while sent < total_requests:
                stats = run(load(api.port, lambda i: lookups[i], args.connections, args.warmup))
                sent += len(stats.latencies)
            rss_after = rss_mb(api.pid)
            soak_seconds = time.perf_counter() - began
        scaled = scale_out(url, sim, keys, permit, args) if args.db == "postgresql" else []
    print(f"database: {args.db}; connections: {args.connections}; {args.duration:.0f} s each")
    print(baseline.line("plain FastAPI bare"))
    print(bare.line("service bare endpoint"))
    print(cached.line("cached status lookup"))
    print(baseline.cpu_line("plain FastAPI bare"))
    print(bare.cpu_line("service bare endpoint"))
    print(cached.cpu_line("cached status lookup"))
    print(
        f"API RSS: {rss_before:.0f} MB before, {rss_after:.0f} MB after {sent} more cached "
        f"lookups ({soak_seconds:.0f} s)  (target <= 200 MB)"
    )
    for line in scaled:
        print(line)
    print(f"cached lookup p99: {cached.percentile(99):.1f} ms (target <= 25 ms)")
    cached_ratio, bare_ratio = median_ratio(cacheds, baselines), median_ratio(bares, baselines)
    print(f"request_path_cached: {cached_ratio:.2f} (target 0.5)")
    print(f"request_path: {bare_ratio:.2f} (target 0.85)")


if __name__ == "__main__":
    main()
