"""Webhook delivery and the events feed, each against a baseline measured in the same run.

1. Throughput: the delivery engine (one worker, in this process) drains --events pending
   deliveries spread over 20 webhooks to a loopback receiver (bench/receiver.py, its own
   process). Baseline: signed POSTs of the same bodies sent straight to the receiver with the
   same concurrency (what the receiver and client allow without the engine). Target >= 500/s.
2. Event to first attempt: the worker loop runs while events are committed one by one at
   random intervals; latency = arrival at the receiver - the event's commit. Baseline: the
   same POST sent directly at the moment of commit. Target p99 <= 1 s.
3. Events-feed page time (limit 50, keyset from a mid-feed cursor) for a key with 10^4
   events, at 10^4 events in the tables and again after growing them to --feed-rows with
   other keys' events. Target ratio <= 1.3.

    python bench/webhook_delivery.py --db sqlite|postgresql [--events 3000]
        [--latency-events 200] [--settle 2] [--feed-rows 1000000] [--feed-key-rows 10000]
        [--page-rounds 300]
"""

from __future__ import annotations

import argparse
import asyncio
import random
import statistics
import subprocess
import sys
import time

import httpx
from sqlalchemy import insert, select

from harness import ROOT, _wait_listening, database, free_port
from permitapi.account import service as accounts
from permitapi.account.plans import PlanName
from permitapi.composition import build_context
from permitapi.config import Settings
from permitapi.context import AppContext
from permitapi.event import feed
from permitapi.event import service as events
from permitapi.event.models import DomainEvent, FeedEntry
from permitapi.webhook import service as webhooks
from permitapi.webhook.jobs import DeliveryJobs
from permitapi.worker.runner import Worker

WEBHOOKS = 20
SECRET = "bench-secret-key-that-is-not-the-placeholder"


def parse() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--db", choices=("sqlite", "postgresql"), default="sqlite")
    parser.add_argument("--events", type=int, default=3000)
    parser.add_argument("--latency-events", type=int, default=200)
    parser.add_argument("--feed-rows", type=int, default=1_000_000)
    parser.add_argument("--feed-key-rows", type=int, default=10_000)
    parser.add_argument(
        "--settle",
        type=float,
        default=2.0,
        help="seconds the worker runs on after the last latency event is committed",
    )
    parser.add_argument("--page-rounds", type=int, default=300, help="feed pages timed per size")
    return parser.parse_args()


class ReceiverProcess:
    def __init__(self) -> None:
        self.port = free_port()
        self.process = subprocess.Popen(
            [sys.executable, str(ROOT / "bench" / "receiver.py"), str(self.port)]
        )
        _wait_listening(self.process, self.port, "receiver")  # type: ignore[arg-type]

    def url(self, path: str = "/hook") -> str:
        return f"http://127.0.0.1:{self.port}{path}"

    def log(self) -> dict[str, float]:
        arrived: dict[str, float] = httpx.get(self.url("/log")).json()
        return arrived

    def close(self) -> None:
        self.process.terminate()
        self.process.wait(10)


async def principal_with_webhooks(ctx: AppContext, receiver: ReceiverProcess) -> str:
    async with ctx.transaction() as session:
        created = await accounts.create_account(
            session,
            plan=PlanName.ENTERPRISE,
            discovery_addon=False,
            overage_enabled=False,
            now=ctx.clock.now(),
        )
        principal = await accounts.resolve_key(session, created.live_key)
        assert principal is not None
        for index in range(WEBHOOKS):
            await webhooks.register(
                session,
                principal,
                checked_url=receiver.url(f"/h{index}"),
                events=["status_change"],
                jurisdiction_filter=None,
                now=ctx.clock.now(),
            )
    return principal.api_key_id


async def emit_one(ctx: AppContext, key_id: str, index: int) -> float:
    """Commit one event (fanned out to every webhook of the key); returns the commit time."""
    async with ctx.transaction() as session:
        await events.emit(
            session,
            "status_change",
            data={"n": index},
            occurred_at=ctx.clock.now(),
            recipients=[key_id],
            permit_number=f"P-{index}",
            jurisdiction="ladbs",
        )
    return time.time()


async def direct_posts(receiver: ReceiverProcess, count: int, concurrency: int) -> float:
    """Baseline rate: the same signed-size bodies posted straight to the receiver."""
    body = b'{"event_id":"x","delivery_id":"y","event":"status_change","data":{}}' * 3
    queue = list(range(count))
    async with httpx.AsyncClient() as client:

        async def worker() -> None:
            while queue:
                index = queue.pop()
                headers = {"webhook-id": f"baseline-{index}", "content-type": "application/json"}
                await client.post(
                    receiver.url(f"/h{index % WEBHOOKS}"), content=body, headers=headers
                )

        started = time.perf_counter()
        await asyncio.gather(*(worker() for _ in range(concurrency)))
        return count / (time.perf_counter() - started)


async def throughput(ctx: AppContext, key_id: str, receiver: ReceiverProcess, count: int) -> None:
    per_event = WEBHOOKS
    for index in range(count // per_event):
        await emit_one(ctx, key_id, index)
    receiver.log()
    baseline = await direct_posts(receiver, count, concurrency=WEBHOOKS)
    receiver.log()
    engine = DeliveryJobs()
    started = time.perf_counter()
    delivered = 0
    while delivered < count:
        handled = await engine.run_due(ctx)
        if handled == 0:
            break
        delivered += handled
    rate = delivered / (time.perf_counter() - started)
    await engine.aclose()
    arrived = len(receiver.log())
    print(f"direct POSTs (baseline)      {baseline:8.0f} /s")
    print(
        f"engine deliveries            {rate:8.0f} /s  ({delivered} attempted, {arrived} arrived)"
    )
    print(f"throughput ratio             {rate / baseline:8.2f} of direct posting")
    print(f"webhook_delivery: throughput {rate:.0f}/s (target >= 500)")


async def first_attempt_latency(
    ctx: AppContext, key_id: str, receiver: ReceiverProcess, count: int, settle: float
) -> None:
    worker = Worker(ctx, [DeliveryJobs()])
    loop_task = asyncio.create_task(worker.run_forever())
    committed: dict[int, float] = {}
    direct: list[float] = []
    async with httpx.AsyncClient() as client:
        for index in range(count):
            await asyncio.sleep(random.uniform(0.0, 0.05))
            committed[index] = await emit_one(ctx, key_id, 1_000_000 + index)
            sent = time.time()
            await client.post(
                receiver.url("/direct"), content=b"{}", headers={"webhook-id": f"d{index}"}
            )
            direct.append(time.time() - sent)
        await asyncio.sleep(settle)
    worker.stop()
    await loop_task
    arrived = receiver.log()
    async with ctx.sessionmaker() as session:
        rows = await session.execute(
            select(DomainEvent.permit_number, DomainEvent.event_id).where(
                DomainEvent.permit_number.like("P-1______")
            )
        )
        event_of = {event_id: int(number[2:]) - 1_000_000 for number, event_id in rows}
    from permitapi.webhook.models import WebhookDelivery

    async with ctx.sessionmaker() as session:
        rows = await session.execute(
            select(WebhookDelivery.delivery_id, WebhookDelivery.event_id).where(
                WebhookDelivery.event_id.in_(list(event_of))
            )
        )
        latencies = [
            arrived[delivery] - committed[event_of[event_id]]
            for delivery, event_id in rows
            if delivery in arrived
        ]
    p50, p99 = _pct(latencies, 50), _pct(latencies, 99)
    print(
        f"direct POST latency (baseline) p50 {_pct(direct, 50) * 1000:6.1f} ms  "
        f"p99 {_pct(direct, 99) * 1000:6.1f} ms"
    )
    print(
        f"event -> first attempt       p50 {p50 * 1000:6.1f} ms  p99 {p99 * 1000:6.1f} ms  "
        f"({len(latencies)} deliveries)"
    )
    print(f"webhook_delivery: first attempt p99 {p99 * 1000:.0f} ms (target <= 1000)")


def _pct(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(p / 100 * len(ordered)))] if ordered else float("nan")


async def add_events(ctx: AppContext, key_ids: list[str], total: int, start_seq: int) -> int:
    """Bulk rows: `total` events spread round-robin over `key_ids`; returns the next seq."""
    now = ctx.clock.now()
    batch = 20_000
    seq = start_seq
    while total > 0:
        size = min(batch, total)
        events_rows = [
            {
                "seq": seq + i,
                "event_id": f"00000000-0000-4000-8000-{seq + i:012d}",
                "event_type": "status_change",
                "permit_number": f"P-{seq + i}",
                "jurisdiction": "ladbs",
                "data": {"n": seq + i},
                "occurred_at": now,
                "created_at": now,
            }
            for i in range(size)
        ]
        feed_rows = [
            {
                "api_key_id": key_ids[(seq + i) % len(key_ids)],
                "event_seq": seq + i,
                "created_at": now,
            }
            for i in range(size)
        ]
        async with ctx.transaction() as session:
            await session.execute(insert(DomainEvent), events_rows)
            await session.execute(insert(FeedEntry), feed_rows)
        seq += size
        total -= size
    return seq


async def page_time(
    ctx: AppContext, principal: accounts.Principal, key_rows: int, rounds: int
) -> float:
    async with ctx.sessionmaker() as session:
        first = await feed.page(
            session,
            principal,
            ctx.directory,
            secret=SECRET,
            cursor=None,
            limit=50,
            now=ctx.clock.now(),
        )
    cursor = first["next_cursor"]
    # A checkpoint halfway through the key's events.
    async with ctx.sessionmaker() as session:
        for _ in range(key_rows // 100 - 1):
            cursor = (
                await feed.page(
                    session,
                    principal,
                    ctx.directory,
                    secret=SECRET,
                    cursor=cursor,
                    limit=50,
                    now=ctx.clock.now(),
                )
            )["next_cursor"]
    timings = []
    async with ctx.sessionmaker() as session:
        for _ in range(rounds):
            started = time.perf_counter()
            body = await feed.page(
                session,
                principal,
                ctx.directory,
                secret=SECRET,
                cursor=cursor,
                limit=50,
                now=ctx.clock.now(),
            )
            timings.append(time.perf_counter() - started)
            assert len(body["events"]) == 50
    return statistics.median(timings)


async def feed_scaling(ctx: AppContext, key_rows: int, total_rows: int, rounds: int) -> None:
    async with ctx.transaction() as session:
        created = await accounts.create_account(
            session,
            plan=PlanName.PRO,
            discovery_addon=False,
            overage_enabled=False,
            now=ctx.clock.now(),
        )
        principal = await accounts.resolve_key(session, created.live_key)
    assert principal is not None
    async with ctx.sessionmaker() as session:
        highest = (
            await session.execute(select(DomainEvent.seq).order_by(DomainEvent.seq.desc()).limit(1))
        ).scalar()
    seq = (highest or 0) + 1
    seq = await add_events(ctx, [principal.api_key_id], key_rows, seq)
    small = await page_time(ctx, principal, key_rows, rounds)
    others = [f"other-key-{i}" for i in range(100)]
    started = time.perf_counter()
    await add_events(ctx, others, max(0, total_rows - key_rows), seq)
    grown = time.perf_counter() - started
    large = await page_time(ctx, principal, key_rows, rounds)
    print(f"feed page at {key_rows:>9,} events        {small * 1000:7.2f} ms (median of {rounds})")
    print(
        f"feed page at {total_rows:>9,} events        {large * 1000:7.2f} ms  "
        f"(tables grown in {grown:.0f} s)"
    )
    print(f"webhook_delivery: feed page ratio {large / small:.2f} (target <= 1.3)")


async def measure(args: argparse.Namespace, url: str) -> None:
    settings = Settings(
        environment="test", database_url=url, secret_key=SECRET, allow_loopback_webhooks=True
    )
    ctx = build_context(settings)
    receiver = ReceiverProcess()
    try:
        key_id = await principal_with_webhooks(ctx, receiver)
        print(f"database: {args.db}; {WEBHOOKS} webhooks on one loopback receiver")
        await throughput(ctx, key_id, receiver, args.events)
        await first_attempt_latency(
            ctx, key_id, receiver, args.latency_events // WEBHOOKS, args.settle
        )
        await feed_scaling(ctx, args.feed_key_rows, args.feed_rows, args.page_rounds)
    finally:
        receiver.close()
        await ctx.gateway.aclose()
        await ctx.engine.dispose()


def main() -> None:
    args = parse()
    with database(args.db) as url:  # migrates with its own event loop: before ours starts
        asyncio.run(measure(args, url))


if __name__ == "__main__":
    main()
