"""A 25-permit batch of cache misses against one miss, with the simulator's latency fixed.

Both go through the real path: the API server, the LADBS adapter and `PortalHttp`, to the
portal simulator in its own process (every portal request delayed by `--latency`). Every permit
is a miss (simulator permits never looked up before), so the time is dominated by portal
requests. A LADBS miss is one PCIS page read alongside its gwh9-jnip row, plus the inspection
dataset when the page lists no inspection on an issued permit; a batch reads its 25 pages and
both datasets at once (docs/decisions.md, "Benchmarks").

The server runs the source policies as shipped (unless `--ladbs-rate`). LADBS's politeness is
a token bucket per host (burst of 25 request starts, then 5 a second): before every measured
single miss and batch the bench waits until the bucket has refilled from the previous
measurement, so both are measured on an idle source; the wait is computed from the policy the
server runs (`permitapi.sources.policies`), not hard-coded. The ratio batch / one miss is
printed last. Target: <= 1.5x. One more line, for information, times batches sent back to
back: from the second on, the sustained rate cap paces their pages.

    python bench/batch_misses.py --db sqlite|postgresql [--latency 0.2] [--rounds 5]
        [--ladbs-rate R]

`--ladbs-rate` overrides the policy's request starts per second per host (server and waits
alike): the smoke test's faster source, so that its waits for a refilled bucket are short.
"""

from __future__ import annotations

import argparse
import time

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
from permitapi.config import Settings
from permitapi.sources.http_policy import SourcePolicy
from permitapi.sources.policies import build_policies
from permitapi.sources.registry import default_directory

ROUNDS = 5
BATCH = 25
BACK_TO_BACK = 3


def ladbs_policy(overrides: dict[str, dict[str, float]]) -> SourcePolicy:
    """The LADBS policy the server runs: as shipped, then `overrides` (its
    PERMITAPI_SOURCE_POLICIES)."""
    return build_policies(Settings(source_policies=overrides), default_directory())["ladbs"]


def _options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--ladbs-rate",
        type=float,
        default=None,
        help="LADBS request starts per second per host (default: as shipped)",
    )


class Source:
    """The simulator's request counts, and the idle wait they imply under the LADBS policy."""

    def __init__(self, sim: Process, policy: SourcePolicy) -> None:
        self.sim = sim
        self.policy = policy

    def await_idle(self) -> None:
        """Sleep until every host's bucket is full again after the requests counted since the
        last reset (the busiest host decides), then reset the counts."""
        per_host: dict[str, int] = {}
        for name, count in sim_requests(self.sim).items():
            host = name.split("/")[0]
            per_host[host] = per_host.get(host, 0) + count
        used = min(max(per_host.values(), default=0), self.policy.burst)
        if used and self.policy.requests_per_second > 0:
            time.sleep(used / self.policy.requests_per_second)
        sim_requests(self.sim, reset=True)


def single_miss(api: Process, key: str, number: str) -> float:
    status, body, took = run(once(api.port, get(f"/api/v1/permits/{number}/status", key, api.port)))
    assert status == 200, body
    assert b'"live_scrape"' in body, body[:300]
    return took


def batch_of_misses(api: Process, key: str, numbers: list[str]) -> float:
    payload = {"permit_numbers": numbers}
    status, body, took = run(
        once(api.port, post_json("/api/v1/permits/batch-status", payload, key, api.port))
    )
    assert status == 200, body
    assert body.count(b'"live_scrape"') == len(numbers), body[:300]
    return took


def measure(
    api: Process, source: Source, key: str, fresh: list[str], rounds: int
) -> tuple[float, float, dict[str, int]]:
    """Medians of `rounds` single misses and 25-miss batches, each on an idle source, and the
    portal requests of one batch. `fresh` supplies never-looked-up permit numbers (consumed)."""
    singles, batches = [], []
    requests: dict[str, int] = {}
    for _ in range(rounds):
        source.await_idle()
        singles.append(single_miss(api, key, fresh.pop()))
        source.await_idle()
        batches.append(batch_of_misses(api, key, [fresh.pop() for _ in range(BATCH)]))
        requests = sim_requests(source.sim)
    return median(singles), median(batches), requests


def back_to_back(api: Process, source: Source, key: str, fresh: list[str]) -> list[float]:
    source.await_idle()
    return [
        batch_of_misses(api, key, [fresh.pop() for _ in range(BATCH)]) for _ in range(BACK_TO_BACK)
    ]


def main() -> None:
    args = arguments(__doc__ or "", rounds=ROUNDS, extra=_options)
    overrides: dict[str, dict[str, float]] = {}
    if args.ladbs_rate is not None:
        overrides["ladbs"] = {"requests_per_second": args.ladbs_rate}
    policy = ladbs_policy(overrides)
    needed = args.rounds * (BATCH + 1) + BACK_TO_BACK * BATCH
    with database(args.db) as url, simulator(args.latency, needed + 20) as sim:
        source = Source(sim, policy)
        fresh = sim_permits(sim)
        (key,) = make_keys(url, 1)
        with server(url, sim, overrides) as api:
            one, batch, requests = measure(api, source, key, fresh, args.rounds)
            sustained = back_to_back(api, source, key, fresh)
    counts = ", ".join(f"{name.split('/')[-1]} {n}" for name, n in sorted(requests.items()))
    shipped = "as shipped" if not overrides else "with --ladbs-rate"
    print(
        f"database: {args.db}; portal latency {args.latency * 1000:.0f} ms; medians of "
        f"{args.rounds}; LADBS policy {shipped}: max_concurrency {policy.max_concurrency}, burst "
        f"{policy.burst}, {policy.requests_per_second:g} requests/s per host"
    )
    print(
        f"idle source:  one miss {one * 1000:7.1f} ms   {BATCH}-miss batch {batch * 1000:7.1f} ms"
        f"   ratio {batch / one:5.2f}   portal requests per batch: {counts}"
    )
    print(
        f"{BACK_TO_BACK} batches back to back (informative; the rate cap paces all but the first): "
        + " / ".join(f"{took * 1000:.0f} ms" for took in sustained)
    )
    print(f"batch_misses: {batch / one:.2f} (target <= 1.5)")


if __name__ == "__main__":
    main()
