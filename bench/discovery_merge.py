"""Discovery merge overhead: a two-source first page vs the slower single source.

The portal simulator serves LADBS (Socrata) and EPIC-LA (ArcGIS) in-process with its latency
fixed, so the only variable is how discovery reads and merges. Each round times:
  - ladbs alone, epicla alone: one `SourceGateway.search` each (the adapters, PortalHttp, sim);
  - merged: one discovery page over both (`discovery.search.run_page`: concurrent reads, merge,
    freshness, cursor position) - the work of GET /permits/search minus auth and metering.

Sources are read concurrently, so the merged page should cost about the slower source; the
ratio `merged / slower single source` is the figure (target <= 1.3: the merge may add at most
30 % on top of the slowest portal, which leaves room for event-loop scheduling of two reads).

Run: python bench/discovery_merge.py [--rounds 20] [--latency-ms 200] [--limit 25]
Needs `permitapi.portalsim.app.create_sim_app` and the ladbs + epicla adapters.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import time
from datetime import UTC, date, datetime

import httpx

from permitapi.discovery.cursor import Position
from permitapi.discovery.filters import parse_search
from permitapi.discovery.search import run_page
from permitapi.sources.base import SearchCriteria
from permitapi.sources.gateway import SourceGateway
from permitapi.sources.http import PortalHttp
from permitapi.sources.registry import default_directory

TARGET = 1.3
TODAY = date(2026, 11, 20)


async def main(rounds: int, latency_ms: int, limit: int) -> float:
    try:
        from permitapi.portalsim.app import create_sim_app
    except ImportError:
        print("discovery_merge: the portal simulator app (permitapi.portalsim.app) is not here")
        sys.exit(2)
    directory = default_directory()
    sim = create_sim_app(directory, latency_ms=latency_ms, today=TODAY)
    http = PortalHttp(portal_base_url="http://portalsim", transport=httpx.ASGITransport(app=sim))
    gateway = SourceGateway(http)
    ladbs, epicla = directory.get("ladbs"), directory.get("epicla")
    assert ladbs is not None
    assert epicla is not None
    query = parse_search([("date_from", "2024-01-01"), ("limit", str(limit))])
    criteria = SearchCriteria(date_from=date(2024, 1, 1), limit=limit)
    now = datetime(2026, 11, 20, 20, 0, tzinfo=UTC)
    timings: dict[str, list[float]] = {"ladbs": [], "epicla": [], "merged": []}
    hits = 0
    for round_number in range(rounds + 1):  # round 0 warms up connections and imports
        started = time.perf_counter()
        await gateway.search(ladbs, criteria)
        ladbs_s = time.perf_counter() - started
        started = time.perf_counter()
        await gateway.search(epicla, criteria)
        epicla_s = time.perf_counter() - started
        started = time.perf_counter()
        outcome = await run_page(
            gateway, directory, query, Position.start(query.sources), now=now, first_page=False
        )
        merged_s = time.perf_counter() - started
        if outcome.partial:
            raise SystemExit(f"discovery_merge: a source failed: {outcome.warnings}")
        if round_number:
            timings["ladbs"].append(ladbs_s)
            timings["epicla"].append(epicla_s)
            timings["merged"].append(merged_s)
            hits = len(outcome.hits)
    await http.aclose()
    medians = {name: statistics.median(values) * 1000 for name, values in timings.items()}
    slower = max(medians["ladbs"], medians["epicla"])
    ratio = medians["merged"] / slower
    print(f"rounds={rounds} latency_ms={latency_ms} limit={limit} merged_hits={hits}")
    for name, value in medians.items():
        p90 = statistics.quantiles(timings[name], n=10)[-1] * 1000 if rounds >= 2 else value
        print(f"  {name:<7} median {value:8.1f} ms   p90 {p90:8.1f} ms")
    print(f"discovery_merge: {ratio:.2f} (target {TARGET})")
    return ratio


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--latency-ms", type=int, default=200)
    parser.add_argument("--limit", type=int, default=25)
    args = parser.parse_args()
    asyncio.run(main(args.rounds, args.latency_ms, args.limit))
