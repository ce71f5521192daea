"""`job_leases` and PassLease on both databases: one holder at a time, lapsed leases taken
over, completion frees the lease and makes the pass not due for a period, and a pass completed
between a worker's due check and its claim is not run again."""

from __future__ import annotations

import asyncio
from datetime import datetime, timedelta

import pytest

from permitapi.context import AppContext
from permitapi.kit.ids import new_uuid
from permitapi.worker import lease_repository
from permitapi.worker.leases import PassLease

MINUTE = timedelta(minutes=1)


async def acquire(ctx: AppContext, name: str, owner: str, now: datetime, until: datetime) -> bool:
    async with ctx.transaction() as session:
        return await lease_repository.try_acquire(session, name, owner, now, until)


async def test_one_holder_until_the_lease_lapses(ctx: AppContext) -> None:
    name, now = f"test-{new_uuid()}", ctx.clock.now()
    async with ctx.sessionmaker() as session:
        assert await lease_repository.last_completed(session, name) is None
    assert await acquire(ctx, name, "a", now, now + 10 * MINUTE)
    assert not await acquire(ctx, name, "b", now + MINUTE, now + 11 * MINUTE)
    assert await acquire(ctx, name, "a", now + MINUTE, now + 20 * MINUTE)  # extended
    assert not await acquire(ctx, name, "b", now + 15 * MINUTE, now + 30 * MINUTE)
    assert await acquire(ctx, name, "b", now + 20 * MINUTE, now + 30 * MINUTE)  # lapsed
    async with ctx.transaction() as session:
        assert not await lease_repository.complete(session, name, "a", now + 21 * MINUTE)
        assert await lease_repository.complete(session, name, "b", now + 22 * MINUTE)
    async with ctx.sessionmaker() as session:
        assert await lease_repository.last_completed(session, name) == now + 22 * MINUTE
    assert await acquire(ctx, name, "a", now + 23 * MINUTE, now + 30 * MINUTE)  # freed
    async with ctx.transaction() as session:
        await lease_repository.release(session, name, "a")
    assert await acquire(ctx, name, "c", now + 24 * MINUTE, now + 30 * MINUTE)


async def test_concurrent_claims_have_one_winner(ctx: AppContext) -> None:
    name, now = f"test-{new_uuid()}", ctx.clock.now()
    results = await asyncio.gather(
        *(acquire(ctx, name, f"owner-{i}", now, now + MINUTE) for i in range(10))
    )
    assert sum(results) == 1


async def test_a_pass_completed_by_another_worker_after_the_due_check_is_not_rerun(
    ctx: AppContext, monkeypatch: pytest.MonkeyPatch
) -> None:
    name = f"test-{new_uuid()}"
    first = PassLease(name, period=timedelta(days=1), lease=10 * MINUTE)
    assert await first.claim(ctx)
    async with ctx.transaction() as session:
        assert await first.complete(session, ctx.clock.now())

    real = lease_repository.last_completed
    stale: list[bool] = []

    async def read_before_the_completion(session: object, lease_name: str) -> datetime | None:
        if not stale:  # the cheap read happened before the other worker completed
            stale.append(True)
            return None
        return await real(session, lease_name)  # type: ignore[arg-type]

    monkeypatch.setattr(lease_repository, "last_completed", read_before_the_completion)
    second = PassLease(name, period=timedelta(days=1), lease=10 * MINUTE)
    assert not await second.claim(ctx)
    monkeypatch.setattr(lease_repository, "last_completed", real)
    # and it freed the lease it took for the check
    assert await acquire(ctx, name, "third", ctx.clock.now(), ctx.clock.now() + MINUTE)


async def test_postponed_pass_is_retried_by_any_worker_after_the_delay(ctx: AppContext) -> None:
    name = f"test-{new_uuid()}"
    failing = PassLease(name, period=timedelta(days=1), lease=10 * MINUTE)
    assert await failing.claim(ctx)
    await failing.postpone(ctx, ctx.clock.now() + 30 * MINUTE)
    other = PassLease(name, period=timedelta(days=1), lease=10 * MINUTE)
    assert not await other.claim(ctx)
    ctx.clock.advance(31 * MINUTE)  # type: ignore[attr-defined]
    assert await PassLease(name, period=timedelta(days=1), lease=10 * MINUTE).claim(ctx)
