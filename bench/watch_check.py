"""The daily watch check's portal requests: 1,000 watched permits per family against the portal
simulator (its own process), counted by the simulator.

For each family (LADBS, EPIC-LA, Accela San Diego): --permits permits are created in the
simulator, read once (their first representation) and watched; a day later the check runs with
nothing changed, then again a day later after --changes permits changed at the portal. The
baseline is one full read per watched permit (the naive daily check), measured in the same run
by reading --sample permits and scaling. Targets: <= 1 request per 200 watched permits on LADBS
and EPIC-LA, <= 1 per permit on Accela.

    python bench/watch_check.py --db sqlite|postgresql [--permits 1000] [--changes 5]
"""

from __future__ import annotations

import argparse
import asyncio
import random
import time
from datetime import UTC, datetime, timedelta

import httpx

from harness import database, simulator
from permitapi.account import service as accounts
from permitapi.account.plans import PlanName
from permitapi.composition import build_context
from permitapi.config import Settings
from permitapi.context import AppContext
from permitapi.kit.clock import FrozenClock
from permitapi.kit.ids import new_uuid
from permitapi.permit.lookup.refresh import refresh_many
from permitapi.watch import repository
from permitapi.watch.jobs import WatchCheck
from permitapi.watch.models import Watch

FAMILIES = {
    "ladbs": lambda i: f"24{i:03d}-{10000 + i // 1000:05d}-{i % 100000:05d}",
    "epicla": lambda i: f"BLDR{2026000000 + i}",
    "aca:sandiego": lambda i: f"PMT-{3300000 + i}",
}
CHANGED_STATUS = {"ladbs": "CofO Issued", "epicla": "Finaled", "aca:sandiego": "Finaled"}


def parse() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--db", choices=("sqlite", "postgresql"), default="sqlite")
    parser.add_argument("--permits", type=int, default=1000)
    parser.add_argument("--changes", type=int, default=5)
    parser.add_argument("--sample", type=int, default=20)
    return parser.parse_args()


async def sim_total(client: httpx.AsyncClient) -> int:
    return sum((await client.get("/_bench/requests")).json().values())


async def seed(ctx: AppContext, client: httpx.AsyncClient, slug: str, count: int) -> list[str]:
    jurisdiction = ctx.directory.get(slug)
    assert jurisdiction is not None
    numbers = []
    for index in range(count):
        created = await client.put(f"/_control/permits/{slug}/{FAMILIES[slug](index)}", json={})
        assert created.status_code in (200, 201), created.text
        numbers.append(str(created.json()["permit_number"]))
    stored = []
    for start in range(0, len(numbers), 25):
        chunk = numbers[start : start + 25]
        outcomes = await refresh_many(ctx, [(jurisdiction, n) for n in chunk], ctx.clock.now())
        stored += [n for (_, n), o in outcomes.items() if o.kind == "fetched"]
    assert len(stored) == len(numbers), f"{slug}: {len(stored)} of {len(numbers)} read"
    return stored


async def watch_all(ctx: AppContext, key_id: str, slug: str, numbers: list[str]) -> None:
    now = ctx.clock.now()
    async with ctx.transaction() as session:
        for number in numbers:
            await repository.insert_watch(
                session,
                Watch(
                    watch_id=new_uuid(),
                    api_key_id=key_id,
                    jurisdiction=slug,
                    permit_number=number,
                    status="active",
                    created_at=now,
                ),
            )
            spread = timedelta(seconds=random.uniform(0, 3600))
            await repository.ensure_watched_permit(
                session, slug, number, now + timedelta(days=1) + spread
            )


async def measure(args: argparse.Namespace, url: str, sim_port: int) -> None:
    clock = FrozenClock(datetime.now(UTC))
    settings = Settings(
        environment="test",
        database_url=url,
        secret_key="bench-secret-key-that-is-not-the-placeholder",
        portal_base_url=f"http://127.0.0.1:{sim_port}",
    )
    ctx = build_context(settings, clock=clock)
    client = httpx.AsyncClient(base_url=f"http://127.0.0.1:{sim_port}", timeout=60)
    try:
        async with ctx.transaction() as session:
            created = await accounts.create_account(
                session,
                plan=PlanName.ENTERPRISE,
                discovery_addon=False,
                overage_enabled=False,
                now=clock.now(),
            )
            principal = await accounts.resolve_key(session, created.live_key)
        assert principal is not None
        print(f"database: {args.db}; {args.permits} watched permits per family")
        for slug in FAMILIES:
            started = time.perf_counter()
            numbers = await seed(ctx, client, slug, args.permits)
            await watch_all(ctx, principal.api_key_id, slug, numbers)
            # Baseline: what reading every watched permit in full would cost.
            await client.post("/_bench/requests")
            sample = numbers[: args.sample]
            jurisdiction = ctx.directory.get(slug)
            assert jurisdiction is not None
            await refresh_many(ctx, [(jurisdiction, n) for n in sample], clock.now())
            naive = await sim_total(client) / len(sample) * len(numbers)

            clock.advance(timedelta(days=1, hours=2))
            await client.post("/_bench/requests")
            check = WatchCheck(jurisdictions={slug})
            checked = await check.run_due(ctx)
            quiet = await sim_total(client)

            for number in random.sample(numbers, args.changes):
                changed = await client.put(
                    f"/_control/permits/{slug}/{number}", json={"status": CHANGED_STATUS[slug]}
                )
                assert changed.status_code == 200, changed.text
            clock.advance(timedelta(days=1, hours=2))
            await client.post("/_bench/requests")
            await check.run_due(ctx)
            busy = await sim_total(client)
            per = quiet / checked if checked else float("nan")
            target = "1/200 = 0.005" if slug != "aca:sandiego" else "1"
            print(
                f"{slug:13} baseline (full reads) {naive:7.0f} requests; quiet day {quiet:5d} "
                f"({per:.4f} per permit); {args.changes} changed: {busy:5d} requests, "
                f"{check.last.emitted} events  [{time.perf_counter() - started:.0f} s]"
            )
            print(
                f"watch_check: {slug} {per:.4f} requests per watched permit, "
                f"{quiet / naive:.4f} of the baseline (target {target})"
            )
    finally:
        await client.aclose()
        await ctx.gateway.aclose()
        await ctx.engine.dispose()


def main() -> None:
    args = parse()
    with database(args.db) as url, simulator(latency=0.0) as sim:
        asyncio.run(measure(args, url, sim.port))


if __name__ == "__main__":
    main()
