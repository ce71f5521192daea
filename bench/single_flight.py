"""N concurrent lookups of one uncached permit, spread over TWO server processes sharing
the database and one portal simulator, against the portal fetches they cause. Single flight
holds within a process (shared task) and across processes (the permit row's refresh lease).

A LADBS fetch is one PCIS permit page plus its Socrata enrichment reads; the figure counts the
PCIS pages the simulator served (fetches), and the total requests are printed too. Target: 1.

    python bench/single_flight.py --db sqlite|postgresql [--n 50] [--latency 0.5]
"""

from __future__ import annotations

import asyncio

from harness import (
    arguments,
    database,
    get,
    make_keys,
    once,
    run,
    server,
    sim_permits,
    sim_requests,
    simulator,
)


async def storm(ports: list[int], key: str, permit: str, n: int) -> list[int]:
    path = f"/api/v1/permits/{permit}/status"
    answers = await asyncio.gather(
        *(once(ports[i % len(ports)], get(path, key, ports[i % len(ports)])) for i in range(n))
    )
    return [status for status, _, _ in answers]


def main() -> None:
    args = arguments(__doc__ or "")
    with database(args.db) as url, simulator(args.latency, ladbs_permits=20) as sim:
        permit = sim_permits(sim)[0]
        (key,) = make_keys(url, 1)
        with server(url, sim) as first, server(url, sim) as second:
            sim_requests(sim, reset=True)
            statuses = run(storm([first.port, second.port], key, permit, args.n))
            requests = sim_requests(sim)
    fetches = sum(n for name, n in requests.items() if name.endswith("/PcisPermitDetail"))
    print(f"database: {args.db}; {args.n} concurrent lookups over 2 processes; "
          f"portal latency {args.latency * 1000:.0f} ms")  # fmt: skip
    print(f"statuses: { {s: statuses.count(s) for s in set(statuses)} }")
    print(f"portal requests: {requests}")
    print(f"single_flight: {fetches} (target 1)")


if __name__ == "__main__":
    main()
