"""The service's request path against a plain FastAPI app started in the same run.

Measures, at 64 keep-alive connections: the plain app's bare endpoint (the baseline), the
service's own bare endpoint (the same handler behind the service's middleware and routing),
and a cached status lookup (auth, burst window, meter reservation, cache read, full record);
then the API process's resident memory after `--requests` more cached lookups. Targets:
bare >= 0.85x the plain app, cached lookup >= 0.5x with p99 <= 25 ms, RSS <= 200 MB.

    python bench/request_path.py --db sqlite|postgresql [--duration 8] [--connections 64]
        [--requests 100000]
"""

from __future__ import annotations

import time
from pathlib import Path

from harness import (
    arguments,
    database,
    get,
    load,
    make_keys,
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


def main() -> None:
    args = arguments(__doc__ or "")
    total_requests = args.requests
    with database(args.db) as url, simulator(latency=0.01, ladbs_permits=20) as sim:
        permit = sim_permits(sim)[0]
        keys = make_keys(url, args.connections)
        with uvicorn_app("bench.plain:create", {}, "plain FastAPI app") as plain:
            bare_plain = get("/bench/bare", None, plain.port)
            run(load(plain.port, lambda _i: bare_plain, args.connections, 2.0))
            baseline = run(
                load(plain.port, lambda _i: bare_plain, args.connections, args.duration, plain)
            )
        with server(url, sim) as api:
            path = f"/api/v1/permits/{permit}/status"
            status, body, _ = run(once(api.port, get(path, keys[0], api.port)))
            assert status == 200, body
            bare_app = get("/bench/bare", None, api.port)
            lookups = [get(path, key, api.port) for key in keys]
            run(load(api.port, lambda _i: bare_app, args.connections, 2.0))
            run(load(api.port, lambda i: lookups[i], args.connections, 2.0))
            bare = run(load(api.port, lambda _i: bare_app, args.connections, args.duration, api))
            cached = run(load(api.port, lambda i: lookups[i], args.connections, args.duration, api))
            rss_before = rss_mb(api.pid)
            began = time.perf_counter()
            sent = 0
            while sent < total_requests:
                stats = run(load(api.port, lambda i: lookups[i], args.connections, 2.0))
                sent += len(stats.latencies)
            rss_after = rss_mb(api.pid)
            soak_seconds = time.perf_counter() - began
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
    print(f"cached lookup p99: {cached.percentile(99):.1f} ms (target <= 25 ms)")
    print(f"request_path_cached: {cached.rps / baseline.rps:.2f} (target 0.5)")
    print(f"request_path: {bare.rps / baseline.rps:.2f} (target 0.85)")


if __name__ == "__main__":
    main()
