"""Refresh leases taken and given back in bulk (batch status): the conditional claim, the bulk
store, and a constant number of statements per batch; on SQLite and PostgreSQL."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Iterator
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import event

from permitapi.context import AppContext
from permitapi.permit import repository as permits
from permitapi.permit.lookup.refresh import refresh_many
from permitapi.sources.detect import permit_id
from permitapi.sources.registry import Jurisdiction
from tests.support.fake_portal import FakePortal, snapshot

LEASE = timedelta(seconds=90)


def numbers(count: int, start: int = 0) -> list[str]:
    return [f"21030-20000-{i:05d}" for i in range(start, start + count)]


async def ensure(ctx: AppContext, wanted: list[str]) -> None:
    async with ctx.transaction() as session:
        rows = [(str(permit_id("ladbs", n)), "ladbs", n) for n in wanted]
        await permits.ensure_rows(session, rows, ctx.clock.now())


async def claim(
    ctx: AppContext, wanted: list[str], owner: str, now: datetime, hold: float = 0.0
) -> set[str]:
    """Claim in one transaction, kept open `hold` seconds after the claim."""
    async with ctx.transaction() as session:
        claims = await permits.claim_refreshes(
            session, [("ladbs", n) for n in wanted], owner, now, now + LEASE
        )
        await asyncio.sleep(hold)
    return {c.permit_number for c in claims}


async def owner_of(ctx: AppContext, number: str) -> str | None:
    async with ctx.sessionmaker() as session:
        state = await permits.refresh_state(session, "ladbs", number)
    assert state is not None
    return state.lease_owner


async def test_bulk_claim_takes_free_and_expired_leases_only(ctx: AppContext) -> None:
    held, expired, free = numbers(3)
    now = ctx.clock.now()
    await ensure(ctx, [held, expired, free])
    await ensure(ctx, [held, free])  # an existing identity row is left alone
    assert await claim(ctx, [held], "other", now) == {held}
    assert await claim(ctx, [expired], "crashed", now - 2 * LEASE) == {expired}

    assert await claim(ctx, [held, expired, free], "me", now) == {expired, free}
    assert await owner_of(ctx, held) == "other"
    assert await owner_of(ctx, expired) == "me"
    assert await claim(ctx, [held, expired, free], "third", now) == set()


async def test_concurrent_bulk_claims_never_share_a_permit(ctx: AppContext) -> None:
    every = numbers(20)
    await ensure(ctx, every)
    now = ctx.clock.now()
    # Overlapping batches, each holding its transaction open while the other claims.
    first, second = await asyncio.gather(
        claim(ctx, every[:12], "first", now, hold=0.2),
        claim(ctx, list(reversed(every[8:])), "second", now, hold=0.2),
    )
    assert not first & second
    assert first | second == set(every)


async def test_bulk_store_and_release_drop_only_the_holders_leases(ctx: AppContext) -> None:
    stored, failed, released, kept = numbers(4)
    now = ctx.clock.now()
    await ensure(ctx, [stored, failed, released, kept])
    await claim(ctx, [stored, failed, released, kept], "me", now)
    async with ctx.transaction() as session:
        await permits.store_snapshots(session, [_representation(stored)], now)
        await permits.store_failures(session, [("ladbs", failed, "source_timeout")], now)
        await permits.release_refreshes(session, [("ladbs", released), ("ladbs", kept)], "me")
        await permits.release_refreshes(session, [("ladbs", kept)], "not me")
    async with ctx.sessionmaker() as session:
        rows = await permits.read_cached_many(session, [("ladbs", n) for n in (stored, failed)])
    assert rows[("ladbs", stored)].raw_status == "Issued"
    assert rows[("ladbs", stored)].fetched_at == now
    assert rows[("ladbs", failed)].last_failure_reason == "source_timeout"
    assert not rows[("ladbs", failed)].has_snapshot
    assert [await owner_of(ctx, n) for n in (stored, failed, released)] == [None, None, None]


async def test_a_permit_fetched_elsewhere_since_the_cache_read_is_not_fetched_again(
    ctx: AppContext, portal: FakePortal
) -> None:
    done_elsewhere, due = numbers(2)
    portal.add(snapshot("ladbs", due))
    since = ctx.clock.now() - timedelta(minutes=1)
    await ensure(ctx, [done_elsewhere])
    async with ctx.transaction() as session:
        await permits.store_snapshots(session, [_representation(done_elsewhere)], ctx.clock.now())
    outcomes = await refresh_many(ctx, [(ladbs(ctx), done_elsewhere), (ladbs(ctx), due)], since)
    assert {key[1]: o.kind for key, o in outcomes.items()} == {
        done_elsewhere: "fetched",
        due: "fetched",
    }
    assert dict(portal.requests) == {("ladbs", due): 1}
    assert await owner_of(ctx, done_elsewhere) is None


async def test_a_batch_refresh_runs_a_constant_number_of_statements(
    ctx: AppContext, portal: FakePortal
) -> None:
    small, large = numbers(5), numbers(25, start=100)
    for number in [*small, *large]:
        portal.add(snapshot("ladbs", number))
    missing = ["21030-20000-99998"]  # a not-found outcome too: failures are stored in bulk
    since = ctx.clock.now()
    counts = []
    for batch in (small + missing, large + missing):
        with statements_on_permit_tables(ctx) as executed:
            await refresh_many(ctx, [(ladbs(ctx), n) for n in batch], since)
        counts.append(len(executed))
    assert counts[0] == counts[1]
    assert counts[0] <= 6  # identity rows, claims, snapshots, coverage, failures (+ moot)


def ladbs(ctx: AppContext) -> Jurisdiction:
    jurisdiction = ctx.directory.get("ladbs")
    assert jurisdiction is not None
    return jurisdiction


def _representation(number: str) -> permits.Representation:
    return permits.Representation(
        jurisdiction="ladbs",
        permit_number=number,
        display_number=number,
        raw_status="Issued",
        normalized_status="issued",
        status_date=None,
        permit_type=None,
        issued_date=None,
        applied_date=None,
        snapshot={"permit_number": number},
        normalization_version="test",
    )


@contextlib.contextmanager
def statements_on_permit_tables(ctx: AppContext) -> Iterator[list[str]]:
    """SQL statements run meanwhile (an executemany counts once) on the permits or coverage
    tables."""
    executed: list[str] = []

    def record(_conn: Any, _cursor: Any, statement: str, *_args: Any) -> None:
        if "permits" in statement or "coverage_observations" in statement:
            executed.append(statement)

    event.listen(ctx.engine.sync_engine, "before_cursor_execute", record)
    try:
        yield executed
    finally:
        event.remove(ctx.engine.sync_engine, "before_cursor_execute", record)
