"""Cached-lookup throughput against a bare endpoint of the same server, at 64 connections.

The cached lookup does everything a real one does: key authentication (short in-process
cache), the burst window, the monthly meter reservation (one conditional UPDATE ... RETURNING)
and the cache read, then renders the full status record. Target: >= 0.25x the bare endpoint's
requests per second, p99 <= 50 ms.

    python bench/cached_lookup.py --db sqlite|postgresql [--duration 8] [--connections 64]
"""

from __future__ import annotations

import asyncio

from harness import arguments, database, get, load, make_keys, once, server

PERMIT = "21030-20000-00256"


def main() -> None:
    args = arguments(__doc__ or "")
    with database(args.db) as url:
        # One key per connection: realistic per-key rates (a key's burst window is small).
        keys = make_keys(url, args.connections)
        with server(url, latency=0.01) as port:
            path = f"/api/v1/permits/{PERMIT}/status"
            status, body, _ = asyncio.run(once(port, get(path, keys[0], port)))
            assert status == 200, body
            bare_request = get("/bench/bare", None, port)
            lookups = [get(path, key, port) for key in keys]

            def bare_call(_index: int) -> bytes:
                return bare_request

            def lookup_call(index: int) -> bytes:
                return lookups[index]

            asyncio.run(load(port, bare_call, args.connections, 2.0))  # warm-up
            asyncio.run(load(port, lookup_call, args.connections, 2.0))
            bare = asyncio.run(load(port, bare_call, args.connections, args.duration))
            cached = asyncio.run(load(port, lookup_call, args.connections, args.duration))
    print(f"database: {args.db}; connections: {args.connections}; {args.duration:.0f} s each")
    print(bare.line("bare endpoint"))
    print(cached.line("cached status lookup"))
    ok = cached.statuses.get(200, 0) == len(cached.latencies)
    print(f"cached lookups all 200: {ok}; p99 {cached.percentile(99):.1f} ms (target <= 50 ms)")
    print(f"cached_lookup: {cached.rps / bare.rps:.2f} (target >= 0.25)")


if __name__ == "__main__":
    main()
