"""A 25-permit batch of cache misses against one miss, with the portal latency fixed.

Every permit is a miss (fresh numbers each round), so the time is dominated by portal
fetches: a batch that fans out concurrently costs about one fetch, not 25. The source cap is
raised to 25 for the main figure (the politeness cap of the real sources is 4, which makes a
25-miss batch about seven fetch rounds; that figure is printed too). Target: <= 1.5x.

    python bench/batch_misses.py --db sqlite|postgresql [--latency 0.2]
"""

from __future__ import annotations

import asyncio
import random

from harness import arguments, database, get, make_keys, median, once, post_json, server

ROUNDS = 5


def fresh_numbers(count: int) -> list[str]:
    return [
        f"{random.randint(10000, 99999)}-{random.randint(10000, 99999)}-"
        f"{random.randint(10000, 99999)}"
        for _ in range(count)
    ]


def measure(port: int, key: str) -> tuple[float, float]:
    singles, batches = [], []
    for _ in range(ROUNDS):
        (number,) = fresh_numbers(1)
        status, body, took = asyncio.run(
            once(port, get(f"/api/v1/permits/{number}/status", key, port))
        )
        assert status == 200, body
        singles.append(took)
        payload = {"permit_numbers": fresh_numbers(25)}
        status, body, took = asyncio.run(
            once(port, post_json("/api/v1/permits/batch-status", payload, key, port))
        )
        assert status == 200, body
        assert body.count(b'"live_scrape"') == 25, body[:300]
        batches.append(took)
    return median(singles), median(batches)


def main() -> None:
    args = arguments(__doc__ or "")
    with database(args.db) as url:
        (key,) = make_keys(url, 1)
        with server(url, latency=args.latency, source_cap=4) as port:
            capped_one, capped_batch = measure(port, key)
        with server(url, latency=args.latency, source_cap=25) as port:
            one, batch = measure(port, key)
    print(f"database: {args.db}; portal latency {args.latency * 1000:.0f} ms; medians of {ROUNDS}")
    print(f"source cap 4:  one miss {capped_one * 1000:7.1f} ms   25-miss batch "
          f"{capped_batch * 1000:7.1f} ms   ratio {capped_batch / capped_one:.2f}")  # fmt: skip
    print(f"source cap 25: one miss {one * 1000:7.1f} ms   25-miss batch "
          f"{batch * 1000:7.1f} ms")  # fmt: skip
    print(f"batch_misses: {batch / one:.2f} (target <= 1.5)")


if __name__ == "__main__":
    main()
