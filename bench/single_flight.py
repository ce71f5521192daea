"""N concurrent lookups of one uncached permit, spread over TWO server processes sharing
the database, against the portal requests they cause. Single flight holds within a process
(shared task) and across processes (the permit row's refresh lease). Target: 1.

    python bench/single_flight.py --db sqlite|postgresql [--n 50] [--latency 0.5]
"""

from __future__ import annotations

import asyncio
import json

from harness import arguments, database, get, make_keys, once, server

PERMIT = "24016-10000-04242"


async def storm(ports: list[int], key: str, n: int) -> list[int]:
    path = f"/api/v1/permits/{PERMIT}/status"
    answers = await asyncio.gather(
        *(once(ports[i % len(ports)], get(path, key, ports[i % len(ports)])) for i in range(n))
    )
    return [status for status, _, _ in answers]


def main() -> None:
    args = arguments(__doc__ or "")
    with database(args.db) as url:
        (key,) = make_keys(url, 1)
        with (
            server(url, latency=args.latency) as first,
            server(url, latency=args.latency) as second,
        ):
            statuses = asyncio.run(storm([first, second], key, args.n))
            made = 0
            for port in (first, second):
                _, body, _ = asyncio.run(once(port, get("/bench/portal-requests", None, port)))
                made += json.loads(body)["requests"]
    print(f"database: {args.db}; {args.n} concurrent lookups over 2 processes; "
          f"portal latency {args.latency * 1000:.0f} ms")  # fmt: skip
    print(f"statuses: { {s: statuses.count(s) for s in set(statuses)} }")
    print(f"single_flight: {made} (target 1)")


if __name__ == "__main__":
    main()
