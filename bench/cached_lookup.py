"""Cached-lookup throughput against a bare endpoint of the same server, at 64 connections.

The cached lookup does everything a real one does: key authentication (short in-process
cache), the burst window, the monthly meter reservation (one conditional UPDATE ... RETURNING)
and the cache read, then renders the full status record. The permit is a simulator permit,
fetched once through the real LADBS adapter before the measurement. Target: >= 0.25x the bare
endpoint's requests per second, p99 <= 50 ms.

The load generator is this Python process (uvloop, raw keep-alive HTTP/1.1) and shares the
machine's cores with the server: its CPU share is printed with each run.

    python bench/cached_lookup.py --db sqlite|postgresql [--duration 8] [--connections 64]
        [--warmup 2]
"""

from __future__ import annotations

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
)


def main() -> None:
    args = arguments(__doc__ or "", warmup=2.0)
    with database(args.db) as url, simulator(latency=0.01, ladbs_permits=20) as sim:
        permit = sim_permits(sim)[0]
        # One key per connection: realistic per-key rates (a key's burst window is small).
        keys = make_keys(url, args.connections)
        with server(url, sim) as api:
            path = f"/api/v1/permits/{permit}/status"
            status, body, _ = run(once(api.port, get(path, keys[0], api.port)))
            assert status == 200, body
            assert b'"live_scrape"' in body, body[:300]
            bare_request = get("/bench/bare", None, api.port)
            lookups = [get(path, key, api.port) for key in keys]

            def bare_call(_index: int) -> bytes:
                return bare_request

            def lookup_call(index: int) -> bytes:
                return lookups[index]

            run(load(api.port, bare_call, args.connections, args.warmup))
            run(load(api.port, lookup_call, args.connections, args.warmup))
            bare = run(load(api.port, bare_call, args.connections, args.duration, api))
            cached = run(load(api.port, lookup_call, args.connections, args.duration, api))
    print(f"database: {args.db}; connections: {args.connections}; {args.duration:.0f} s each")
    print(bare.line("bare endpoint"))
    print(cached.line("cached status lookup"))
    print(bare.cpu_line("bare endpoint"))
    print(cached.cpu_line("cached status lookup"))
    print(f"slow cached lookups: {cached.stalls()}")
    ok = cached.statuses.get(200, 0) == len(cached.latencies)
    print(f"cached lookups all 200: {ok}; p99 {cached.percentile(99):.1f} ms (target <= 50 ms)")
    print(f"cached_lookup: {cached.rps / bare.rps:.2f} (target >= 0.25)")


if __name__ == "__main__":
    main()
