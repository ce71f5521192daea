"""A 25-permit batch of cache misses against one miss, with the simulator's latency fixed.

Both go through the real path: the API server, the LADBS adapter and `PortalHttp`, to the
portal simulator in its own process (every portal request delayed by `--latency`). Every permit
is a miss (simulator permits never looked up before), so the time is dominated by portal
requests. A LADBS miss is one PCIS page plus Socrata enrichment reads.

Two figures, each with its one-miss baseline measured in the same server:
  - polite caps: the source policies as shipped (per-host concurrency caps);
  - cap 25: `max_concurrency` raised to 25 for LADBS, i.e. what the service itself adds when
    the portal is not the limit. This is the ratio printed last. Target: <= 1.5x.

    python bench/batch_misses.py --db sqlite|postgresql [--latency 0.2]
"""

from __future__ import annotations

from harness import (
    Process,
    arguments,
    database,
    get,
    make_keys,
    median,
    once,
    post_json,
    run,
    server,
    sim_permits,
    sim_requests,
    simulator,
)

ROUNDS = 5
BATCH = 25
UNCAPPED = {"ladbs": {"max_concurrency": 25.0}}


def measure(
    api: Process, sim: Process, key: str, fresh: list[str]
) -> tuple[float, float, dict[str, int]]:
    """Medians of ROUNDS single misses and 25-miss batches, and the portal requests of one
    batch. `fresh` supplies never-looked-up permit numbers (consumed)."""
    singles, batches = [], []
    requests: dict[str, int] = {}
    for _ in range(ROUNDS):
        number = fresh.pop()
        path = f"/api/v1/permits/{number}/status"
        status, body, took = run(once(api.port, get(path, key, api.port)))
        assert status == 200, body
        assert b'"live_scrape"' in body, body[:300]
        singles.append(took)
        payload = {"permit_numbers": [fresh.pop() for _ in range(BATCH)]}
        sim_requests(sim, reset=True)
        status, body, took = run(
            once(api.port, post_json("/api/v1/permits/batch-status", payload, key, api.port))
        )
        assert status == 200, body
        assert body.count(b'"live_scrape"') == BATCH, body[:300]
        requests = sim_requests(sim)
        batches.append(took)
    return median(singles), median(batches), requests


def line(label: str, one: float, batch: float, requests: dict[str, int]) -> str:
    counts = ", ".join(f"{name.split('/')[-1]} {n}" for name, n in sorted(requests.items()))
    return (
        f"{label:13} one miss {one * 1000:7.1f} ms   {BATCH}-miss batch {batch * 1000:7.1f} ms   "
        f"ratio {batch / one:5.2f}   portal requests per batch: {counts}"
    )


def main() -> None:
    args = arguments(__doc__ or "")
    per_config = ROUNDS * (BATCH + 1)
    with database(args.db) as url, simulator(args.latency, 2 * per_config + 20) as sim:
        fresh = sim_permits(sim)
        (key,) = make_keys(url, 1)
        with server(url, sim) as api:
            polite = measure(api, sim, key, fresh)
        with server(url, sim, UNCAPPED) as api:
            one, batch, requests = measure(api, sim, key, fresh)
    print(f"database: {args.db}; portal latency {args.latency * 1000:.0f} ms; medians of {ROUNDS}")
    print(line("polite caps:", *polite))
    print(line("cap 25:", one, batch, requests))
    print(f"batch_misses: {batch / one:.2f} (target <= 1.5)")


if __name__ == "__main__":
    main()
