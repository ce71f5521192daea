"""Workers SIGKILLed at random while operations, deliveries and the daily passes run: nothing
is lost and nothing that must happen once happens twice. Both engines, real processes.

- Operations: a batch of durable operations (Accela cache misses at 1 credit, LADBS forced
  refreshes at 10, permits the portal does not have, and an agency that is down) is run by two
  `permitapi worker` processes over a slowed portal simulator; a worker holding operations is
  SIGKILLed at random moments and replaced, until every operation is terminal. Each completes
  once (one result, one `operation_completed` event, feed entry and delivery row), the meter
  holds exactly the credits the settlement rules give, and every `operation_completed` webhook
  reaches the receiver (at-least-once).
- Daily passes: watched permits change status and the city and county publish permits after
  the saved searches' and the permit_created monitor's baselines; `permitapi jobs run
  watch-check | saved-searches | permit-created` run side by side and are SIGKILLed at random
  moments mid-pass and restarted until each pass completes. Every expected `status_change`,
  `criteria_match` and `permit_created` exists exactly once, with one feed entry and one
  delivery row, and nothing else was emitted.

The passes' leases (30 minutes, constants of each pass, no setting) are lapsed by the test
after a kill, as if their time had run out, so that the restarted pass may take over at once;
the operation, refresh and delivery leases are set short through their settings. The commands
run in processes forked from one pre-imported parent (tests/support/prewarmed.py): a restart
costs milliseconds instead of a ~3 s import, so kills land in the work, not in start-ups.
"""

from __future__ import annotations

import asyncio
import itertools
import random
import signal
import time
from collections import Counter
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest
from fastapi import FastAPI
from sqlalchemy import select, update

from permitapi.app import create_app
from permitapi.config import Settings
from permitapi.context import AppContext
from permitapi.event.models import DomainEvent, FeedEntry
from permitapi.event.service import PERMIT_EVENT_TYPES
from permitapi.permit.lookup.jobs import MAX_ATTEMPTS
from permitapi.permit.operation.models import Operation
from permitapi.permit_created.jobs import PermitCreatedMonitor
from permitapi.saved_search.jobs import SavedSearchEvaluations
from permitapi.saved_search.models import SavedSearch
from permitapi.usage import repository as meters
from permitapi.watch.models import WatchedPermit
from permitapi.webhook.models import WebhookDelivery
from permitapi.worker.models import JobLease
from tests.conftest import TEST_SECRET
from tests.support import databases
from tests.support.cli import cli_env, fresh_database
from tests.support.portal_sim import SimControl, running_portal_sim
from tests.support.prewarmed import Child, Prewarmed
from tests.support.receiver import Receiver, running_receiver
from tests.webhook.conftest import Key, new_key

pytestmark = pytest.mark.slow

TERMINAL = ("succeeded", "failed")
# Several runs share one simulator: permits they publish get numbers of their own.
_runs = itertools.count(1)


@pytest.fixture(scope="module")
def simulator() -> Iterator[str]:
    with running_portal_sim() as url:
        yield url


@pytest.fixture(scope="module")
def processes(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Prewarmed]:
    parent = Prewarmed(tmp_path_factory.mktemp("prewarmed"), cli_env(None))
    yield parent
    parent.close()


@pytest.fixture(params=["sqlite", "postgresql"])
def database_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    made = fresh_database(request.param, tmp_path)
    try:
        yield databases.migrated(next(made))
    finally:
        for _ in made:  # its end drops the PostgreSQL database
            pass


@pytest.fixture
async def app(database_url: str, simulator: str) -> AsyncIterator[FastAPI]:
    """The API in process (no worker) on the system clock the worker processes use."""
    settings = Settings(
        environment="test",
        database_url=database_url,
        secret_key=TEST_SECRET,
        portal_base_url=simulator,
        allow_loopback_webhooks=True,
        database_pool_size=5,
    )
    application = create_app(settings)
    async with application.router.lifespan_context(application):
        yield application


@pytest.fixture
async def client(app: FastAPI) -> AsyncIterator[httpx.AsyncClient]:
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://testserver") as http:
        yield http


@pytest.fixture
async def sim(simulator: str) -> AsyncIterator[SimControl]:
    async with httpx.AsyncClient(base_url=simulator, timeout=30) as http:
        control = SimControl(http)
        await control.clear_faults()
        yield control
        await control.clear_faults()


def process_env(database_url: str, simulator: str, **extra: str) -> dict[str, str]:
    return cli_env(
        database_url,
        PERMITAPI_SECRET_KEY=TEST_SECRET,
        PERMITAPI_PORTAL_BASE_URL=simulator,
        PERMITAPI_ALLOW_LOOPBACK_WEBHOOKS="true",
        PERMITAPI_LOG_FORMAT="text",
        **extra,
    )


def pid_of(owner: str | None) -> int | None:
    """The process of a lease owner (`host:pid:nonce`, worker.leases / permit.lookup.refresh)."""
    if owner is None:
        return None
    parts = owner.split(":")
    return int(parts[-2]) if len(parts) >= 3 and parts[-2].isdigit() else None


async def register(
    client: httpx.AsyncClient, key: Key, receiver: Receiver, path: str, events: list[str]
) -> None:
    response = await client.post(
        "/api/v1/webhooks", json={"url": receiver.url(path), "events": events},
        headers=key.headers,
    )  # fmt: skip
    assert response.status_code == 201, response.text


async def feed_and_deliveries(
    ctx: AppContext, key: Key, event_types: tuple[str, ...]
) -> tuple[list[DomainEvent], Counter[int], Counter[str]]:
    """The events of these types, the key's feed entries per event seq, and the delivery rows
    per event id (replays excluded)."""
    async with ctx.sessionmaker() as session:
        emitted = list(
            (
                await session.execute(
                    select(DomainEvent)
                    .where(DomainEvent.event_type.in_(event_types))
                    .order_by(DomainEvent.seq)
                )
            ).scalars()
        )
        feed = Counter(
            (
                await session.execute(
                    select(FeedEntry.event_seq).where(FeedEntry.api_key_id == key.api_key_id)
                )
            ).scalars()
        )
        deliveries = Counter(
            (
                await session.execute(
                    select(WebhookDelivery.event_id).where(WebhookDelivery.replay_of.is_(None))
                )
            ).scalars()
        )
    return emitted, feed, deliveries


def assert_fanned_out_once(
    emitted: list[DomainEvent], feed: Counter[int], deliveries: Counter[str]
) -> None:
    """Each event: exactly one entry in the key's feed and one delivery to its one webhook."""
    for event in emitted:
        assert feed[event.seq] == 1, (event.event_type, event.permit_number, feed[event.seq])
        assert deliveries[event.event_id] == 1, (event.event_type, event.permit_number)


# -- operations ---------------------------------------------------------------------------

FOUND_AGENCIES = ("aca:sandiego", "aca:sacramento", "aca:anaheim", "aca:fresno")
DOWN_AGENCY = "aca:stockton"
FOUND_PER_AGENCY = 4
DOWN_OPERATIONS = 3
FORCED_LADBS = 6
WORKERS = 2
OPERATION_KILLS = 6
OPERATIONS_ENV = {
    "PERMITAPI_OPERATION_LEASE_SECONDS": "4",
    "PERMITAPI_REFRESH_LEASE_SECONDS": "4",
    "PERMITAPI_DELIVERY_LEASE_SECONDS": "2",
    "PERMITAPI_WORKER_POLL_INTERVAL_SECONDS": "0.1",
    "PERMITAPI_SOURCE_MAX_ATTEMPTS": "1",
}


@dataclass(frozen=True)
class Planned:
    jurisdiction: str
    permit_number: str
    credits: int  # reserved at acceptance
    outcome: str  # found | missing | down
    forced: bool = False


async def accept(client: httpx.AsyncClient, key: Key, planned: Planned) -> str:
    params = {"jurisdiction": planned.jurisdiction}
    headers = dict(key.headers)
    if planned.forced:
        params["force_refresh"] = "true"
        headers["Prefer"] = "respond-async"
    response = await client.get(
        f"/api/v1/permits/{planned.permit_number}/status", params=params, headers=headers
    )
    assert response.status_code == 202, response.text
    operation_id: str = response.json()["operation_id"]
    return operation_id


async def plan_operations(sim: SimControl) -> list[Planned]:
    """Accela cache misses (1 credit: found, missing at the portal, or at an agency that is
    down) and forced LADBS refreshes (10 credits), agencies interleaved."""
    groups: list[list[Planned]] = []
    for slug in FOUND_AGENCIES:
        found = await sim.permits(slug, FOUND_PER_AGENCY)
        groups.append([Planned(slug, p["permit_number"], 1, "found") for p in found])
        groups[-1].append(Planned(slug, f"NOPE-{len(groups):07d}", 1, "missing"))
    down = await sim.permits(DOWN_AGENCY, DOWN_OPERATIONS)
    groups.append([Planned(DOWN_AGENCY, p["permit_number"], 1, "down") for p in down])
    forced = await sim.permits("ladbs", FORCED_LADBS)
    groups.append([Planned("ladbs", p["permit_number"], 10, "found", True) for p in forced])
    return [item for row in itertools.zip_longest(*groups) for item in row if item is not None]


async def operations(ctx: AppContext) -> dict[str, Operation]:
    async with ctx.sessionmaker() as session:
        rows = (await session.execute(select(Operation))).scalars()
        return {row.operation_id: row for row in rows}


async def delivery_rows(ctx: AppContext) -> int:
    async with ctx.sessionmaker() as session:
        return len((await session.execute(select(WebhookDelivery.delivery_id))).all())


async def delivered(ctx: AppContext) -> int:
    async with ctx.sessionmaker() as session:
        rows = await session.execute(
            select(WebhookDelivery.delivery_id).where(WebhookDelivery.status == "delivered")
        )
        return len(rows.all())


async def test_operations_complete_once_while_workers_are_killed(
    app: FastAPI,
    processes: Prewarmed,
    client: httpx.AsyncClient,
    sim: SimControl,
    simulator: str,
    database_url: str,
    tmp_path: Path,
) -> None:
    ctx: AppContext = app.state.ctx
    rng = random.Random(f"operations:{database_url.split(':')[0]}")
    with running_receiver() as receiver:
        key = await new_key(ctx, "pro")
        await register(client, key, receiver, "/ops", ["operation_completed"])
        # Every portal request takes a while, so that workers die holding operations (and
        # the refresh leases of their permits); one agency answers nothing but 502s.
        await sim.fault("*", "slow", latency_ms=300)
        await sim.fault(DOWN_AGENCY, "down")
        env = process_env(database_url, simulator, **OPERATIONS_ENV)
        # Started first: they boot while the operations are accepted.
        workers = [
            processes.spawn("worker", "worker", cwd=tmp_path, env=env) for _ in range(WORKERS)
        ]
        killed: list[Child] = []
        try:
            planned = {await accept(client, key, item): item for item in await plan_operations(sim)}
            active: set[int | None] = set()  # workers seen holding operations
            next_kill = time.monotonic()
            deadline = time.monotonic() + 90
            while True:
                rows = await operations(ctx)
                if all(row.status in TERMINAL for row in rows.values()):
                    break
                for worker in workers:
                    assert worker.running(), worker.tail()
                assert time.monotonic() < deadline, "operations not terminal:\n" + "\n".join(
                    w.tail() for w in workers
                )
                holding = {
                    pid_of(row.lease_owner) for row in rows.values() if row.status == "running"
                }
                active |= holding
                # Kill a worker holding operations at a random moment, once every worker is
                # at work (a replacement still booting is no target, and the other one keeps
                # the operations moving meanwhile).
                if (
                    len(killed) < OPERATION_KILLS
                    and time.monotonic() >= next_kill
                    and all(w.pid in active for w in workers)
                ):
                    victims = [w for w in workers if w.pid in holding]
                    if victims:
                        victim = rng.choice(victims)
                        victim.sigkill()
                        killed.append(victim)
                        workers[workers.index(victim)] = processes.spawn(
                            "worker", "worker", cwd=tmp_path, env=env
                        )
                        next_kill = time.monotonic() + rng.uniform(0.2, 1.5)
                await asyncio.sleep(0.1)
            # The operation_completed deliveries: each reaches the receiver at least once.
            while await delivered(ctx) < await delivery_rows(ctx):
                for worker in workers:
                    assert worker.running(), worker.tail()
                assert time.monotonic() < deadline, f"{await delivered(ctx)} delivered"
                await asyncio.sleep(0.2)
        finally:
            for worker in workers:
                worker.stop()
        received = {item.headers["webhook-id"] for item in receiver.on("/ops")}

    assert len(killed) >= 4, len(killed)
    assert all(w.returncode == -signal.SIGKILL for w in killed)
    rows = await operations(ctx)
    assert set(rows) == set(planned)
    # The kills hit operations mid-run: some were taken over and completed by another worker.
    assert any(r.attempts > 1 and r.status == "succeeded" for r in rows.values()), [
        (r.attempts, r.status) for r in rows.values()
    ]

    expected_credits = 0
    for operation_id, row in rows.items():
        item = planned[operation_id]
        assert row.reserved_units == item.credits
        assert row.lease_owner is None
        assert row.completed_at is not None
        abandoned = row.error is not None and row.error["code"] == "operation_abandoned"
        if abandoned:
            # Spec: a job that killed its worker three times fails, releasing its credits.
            assert row.status == "failed"
            assert row.attempts > MAX_ATTEMPTS
        elif item.outcome == "down":
            assert row.status == "failed", row.result
            assert row.error is not None
            assert row.error["code"] == "jurisdiction_unavailable", row.error
            assert row.result is None
        else:
            assert row.status == "succeeded", (item, row.error)
            assert row.error is None
            assert row.result is not None
            if item.outcome == "missing":
                assert (row.result["status"], row.result["code"]) == (404, "permit_not_found")
            else:
                assert row.result["jurisdiction"] == item.jurisdiction
                # A worker killed after storing the permit's fetch left a fresh copy: the
                # operation that takes over answers it as a lookup would (cached), unless
                # forced.
                sources = ("live_scrape",) if item.forced else ("live_scrape", "cached")
                assert row.result["source"] in sources, (item, row.attempts)
        if row.status == "succeeded":
            expected_credits += item.credits
    assert expected_credits > 0
    async with ctx.sessionmaker() as session:
        period = next(iter(rows.values())).reserved_period
        assert period is not None
        used = await meters.used_by_meter(session, key.api_key_id, period)
    # Consumed once on success, given back once on failure: nothing charged twice, no
    # reservation left behind.
    assert used.get("lookup", 0) == expected_credits, (used, expected_credits)

    emitted, feed, deliveries = await feed_and_deliveries(ctx, key, ("operation_completed",))
    completions = Counter(event.data["operation_id"] for event in emitted)
    assert completions == Counter(set(planned)), completions.most_common(3)
    for event in emitted:
        assert event.data["status"] == rows[event.data["operation_id"]].status
    assert_fanned_out_once(emitted, feed, deliveries)
    async with ctx.sessionmaker() as session:
        sent = set((await session.execute(select(WebhookDelivery.delivery_id))).scalars())
    assert len(sent) == len(planned)
    assert received == sent  # none lost (duplicates allowed: at-least-once)


# -- the daily passes ---------------------------------------------------------------------

WATCHED = {"ladbs": 8, "epicla": 6, "aca:sandiego": 3, "aca:anaheim": 3}
NEW_STATUSES = {
    "ladbs": ("Ready to Issue", "Issued"),
    "epicla": ("Approved", "Issued"),
    "aca": ("Issued", "Inspection Required"),
}
SEARCHES: dict[str, dict[str, Any]] = {
    "city": {"city": "Los Angeles"},
    "city ladbs": {"jurisdiction": "ladbs"},
    "county": {"county": "Los Angeles County"},
    "county epicla": {"jurisdiction": "epicla"},
    "city recent": {"city": "Los Angeles", "date_from": "2000-01-01"},
}
PUBLISHED = {"ladbs": 4, "epicla": 3}
PASSES = ("watch-check", "saved-searches", "permit-created")
PASSES_EVENTS = ("criteria_match", "permit_created", *PERMIT_EVENT_TYPES)
KILLS_PER_PASS = 2
# After the pass is seen at work, it is killed within this many seconds (if still running).
KILL_WITHIN = {"watch-check": 5.0, "saved-searches": 2.5, "permit-created": 1.2}
PASSES_ENV = {"PERMITAPI_REFRESH_LEASE_SECONDS": "4"}


def published_number(slug: str, run: int, index: int) -> str:
    if slug == "ladbs":
        return f"26019-9{run:02d}{index:02d}-99999"
    return f"UNC-BLDR2611{run:02d}{index:02d}9999"


async def watch_permits(
    client: httpx.AsyncClient, sim: SimControl, key: Key
) -> dict[tuple[str, str], str]:
    """Watch live permits; returns each one's raw status at enrollment."""
    watched: dict[tuple[str, str], str] = {}
    for slug, count in WATCHED.items():
        for permit in await sim.permits(slug, 40):
            if sum(1 for s, _ in watched if s == slug) == count:
                break
            truth = await sim.permit(slug, permit["permit_number"])
            if truth["status"] in ("expired", "cancelled"):
                continue  # a terminal permit's watch completes at once
            response = await client.post(
                f"/api/v1/permits/{permit['permit_number']}/watch",
                params={"jurisdiction": slug},
                headers=key.headers,
            )
            assert response.status_code == 201, response.text
            watched[(slug, response.json()["permit_number"])] = truth["raw_status"]
    return watched


@dataclass
class PassRun:
    """One daily pass: its current `jobs run` process and its kills."""

    name: str
    kills_left: int
    process: Child | None = None
    kill_at: float | None = None
    baseline: int = 0  # simulator requests (watch-check: Accela) when the process started
    kills: int = 0
    runs: int = 0
    done: bool = False


async def pass_at_work(ctx: AppContext, sim: SimControl, run: PassRun) -> bool:
    """Whether the pass is past its start-up: it holds its lease (saved searches,
    permit_created), or it is reading portals (the forced watch check takes no lease; it
    reads the Accela agencies first, which only it reads)."""
    assert run.process is not None
    if run.name == "watch-check":
        counts = await sim.requests()
        return sum(n for slug, n in counts.items() if slug.startswith("aca:")) > run.baseline
    async with ctx.sessionmaker() as session:
        owner = (
            await session.execute(select(JobLease.owner).where(JobLease.name == run.name))
        ).scalar_one_or_none()
    return pid_of(owner) == run.process.pid


async def lapse_lease(ctx: AppContext, name: str, pid: int) -> None:
    """The killed process's pass lease runs out now instead of in 30 minutes."""
    async with ctx.transaction() as session:
        await session.execute(
            update(JobLease)
            .where(JobLease.name == name, JobLease.owner.like(f"%:{pid}:%"))
            .values(leased_until=ctx.clock.now() - timedelta(seconds=1))
        )


async def pass_complete(ctx: AppContext, name: str, since: datetime) -> bool:
    async with ctx.sessionmaker() as session:
        if name == "watch-check":
            rows = (await session.execute(select(WatchedPermit))).scalars().all()
            return all(
                r.last_checked_at is not None
                and r.last_checked_at >= since
                and r.last_check_error is None
                for r in rows
            )
        if name == "saved-searches":
            searches = (await session.execute(select(SavedSearch))).scalars().all()
            return all(s.last_success_at is not None and s.last_success_at >= since
                       for s in searches)  # fmt: skip
        completed = (
            await session.execute(select(JobLease.last_completed_at).where(JobLease.name == name))
        ).scalar_one_or_none()
        return completed is not None and completed >= since


async def test_daily_passes_emit_each_event_once_while_killed(
    app: FastAPI,
    processes: Prewarmed,
    client: httpx.AsyncClient,
    sim: SimControl,
    simulator: str,
    database_url: str,
    tmp_path: Path,
) -> None:
    ctx: AppContext = app.state.ctx
    run_number = next(_runs)
    rng = random.Random(f"passes:{database_url.split(':')[0]}")
    with running_receiver() as receiver:
        key = await new_key(ctx, "pro")  # with the discovery add-on
        await register(client, key, receiver, "/events", list(PASSES_EVENTS))
        watched = await watch_permits(client, sim, key)
        searches: dict[str, str] = {}
        for name, criteria in SEARCHES.items():
            response = await client.post(
                "/api/v1/saved-searches", json={"name": name, "criteria": criteria},
                headers=key.headers,
            )  # fmt: skip
            assert response.status_code == 201, response.text
            searches[name] = response.json()["saved_search_id"]
        # The silent baselines: every search's newest page, the monitor's three-day window.
        assert await SavedSearchEvaluations(force=True).run_due(ctx) == len(SEARCHES)
        assert await PermitCreatedMonitor(force=True).run_due(ctx) > 0
        emitted, _, _ = await feed_and_deliveries(ctx, key, PASSES_EVENTS)
        assert emitted == []

        # What happens at the portals: half the watched permits change status, the city and
        # the county publish new permits (issued today).
        changed: dict[tuple[str, str], str] = {}
        for index, ((slug, number), status) in enumerate(sorted(watched.items())):
            if index % 2 == 0:
                choices = NEW_STATUSES[slug.split(":")[0]]
                new = next(c for c in choices if c != status)
                await sim.put(slug, number, raw_status=new)
                changed[(slug, number)] = new
        published = {
            (slug, published_number(slug, run_number, index))
            for slug, count in PUBLISHED.items()
            for index in range(count)
        }
        for slug, number in sorted(published):
            await sim.put(slug, number)
        since = ctx.clock.now()
        await sim.fault("*", "slow", latency_ms=250)
        await sim.fault("ladbs", "slow", latency_ms=600)
        await sim.fault("epicla", "slow", latency_ms=600)

        env = process_env(database_url, simulator, **PASSES_ENV)
        runs = {name: PassRun(name, KILLS_PER_PASS) for name in PASSES}
        deadline = time.monotonic() + 90
        try:
            while not all(run.done for run in runs.values()):
                assert time.monotonic() < deadline, "\n".join(
                    r.process.tail() for r in runs.values() if r.process is not None
                )
                for run in runs.values():
                    await step(ctx, sim, processes, run, rng, since, env, tmp_path)
                await asyncio.sleep(0.05)
        finally:
            for run in runs.values():
                if run.process is not None:
                    run.process.sigkill()

    for run in runs.values():
        assert run.kills == KILLS_PER_PASS, (run.name, run.kills, run.runs)

    emitted, feed, deliveries = await feed_and_deliveries(ctx, key, PASSES_EVENTS)
    assert_fanned_out_once(emitted, feed, deliveries)
    by_type: dict[str, list[DomainEvent]] = {}
    for event in emitted:
        by_type.setdefault(event.event_type, []).append(event)

    status_changes = Counter((e.jurisdiction, e.permit_number) for e in by_type["status_change"])
    assert status_changes == Counter(set(changed)), status_changes
    for event in by_type["status_change"]:
        identity = (str(event.jurisdiction), str(event.permit_number))
        assert event.data["new_portal_status"] == changed[identity]
    # No other permit event was emitted twice either.
    permit_events = Counter(
        (e.event_type, e.jurisdiction, e.permit_number)
        for e in emitted
        if e.event_type in PERMIT_EVENT_TYPES
    )
    assert max(permit_events.values()) == 1, permit_events.most_common(3)

    matches = Counter(
        (e.data["saved_search_id"], e.jurisdiction, e.permit_number)
        for e in by_type["criteria_match"]
    )
    expected_matches = {
        (search_id, slug, number)
        for name, search_id in searches.items()
        for slug, number in published
        if slug == ("epicla" if "county" in name else "ladbs")
    }
    assert matches == Counter(expected_matches), matches

    created = Counter((e.jurisdiction, e.permit_number) for e in by_type["permit_created"])
    assert created == Counter(published), created


async def step(
    ctx: AppContext,
    sim: SimControl,
    processes: Prewarmed,
    run: PassRun,
    rng: random.Random,
    since: datetime,
    env: dict[str, str],
    workdir: Path,
) -> None:
    """Advance one pass: start its process, kill it at a random moment once it is at work
    (lapsing its lease), or, when it ended by itself, check whether the pass is complete."""
    if run.done:
        return
    process = run.process
    if process is None:
        if run.name == "watch-check":
            counts = await sim.requests()
            run.baseline = sum(n for slug, n in counts.items() if slug.startswith("aca:"))
        run.process = processes.spawn(run.name, "jobs", "run", run.name, cwd=workdir, env=env)
        run.runs += 1
        run.kill_at = None
        return
    if not process.running():
        # A run that ended by itself completed the pass, whatever its predecessors left.
        assert process.returncode == 0, process.tail()
        assert "Traceback" not in process.log.read_text(errors="replace"), process.tail()
        assert await pass_complete(ctx, run.name, since), process.tail()
        # Done once killed as often as planned: a pass that completed before its kills runs
        # again (a rerun must not emit anything either).
        run.done = run.kills_left == 0
        run.process = None
        assert run.runs < 12, process.tail()
        return
    if run.kills_left == 0:
        return
    if run.kill_at is None:
        if await pass_at_work(ctx, sim, run):
            run.kill_at = time.monotonic() + rng.uniform(0, KILL_WITHIN[run.name])
        return
    if time.monotonic() >= run.kill_at:
        process.sigkill()
        await lapse_lease(ctx, run.name, process.pid)
        run.kills_left -= 1
        run.kills += 1
        run.process = None
