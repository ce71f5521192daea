"""Monthly meters: reserve, release, limits, overage, and concurrency safety."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta

import pytest

from permitapi.account import service as accounts
from permitapi.account.plans import Meter
from permitapi.context import AppContext
from permitapi.errors import TooManyRequests
from permitapi.usage import service as usage
from tests.support.accounts import make_account


async def principal_of(ctx: AppContext, raw_key: str) -> accounts.Principal:
    async with ctx.sessionmaker() as session:
        principal = await accounts.resolve_key(session, raw_key)
    assert principal is not None
    return principal


async def reserve(ctx: AppContext, principal: accounts.Principal, units: int) -> usage.Reservation:
    async with ctx.transaction() as session:
        return await usage.reserve(session, principal, Meter.LOOKUP, units, ctx.clock.now())


async def used(ctx: AppContext, principal: accounts.Principal, meter: Meter = Meter.LOOKUP) -> int:
    async with ctx.sessionmaker() as session:
        return (await usage.meter_state(session, principal, meter, ctx.clock.now())).used


async def test_free_key_stops_at_hard_cap(ctx: AppContext) -> None:
    principal = await principal_of(ctx, (await make_account(ctx, "free")).live_key)
    await reserve(ctx, principal, 195)
    await reserve(ctx, principal, 5)
    with pytest.raises(TooManyRequests) as caught:
        await reserve(ctx, principal, 1)
    assert caught.value.code == "rate_limit_exceeded"
    assert caught.value.extra["limit"] == 200
    assert await used(ctx, principal) == 200


async def test_free_key_ignores_overage_flag(ctx: AppContext) -> None:
    created = await make_account(ctx, "free", overage=True)
    principal = await principal_of(ctx, created.live_key)
    await reserve(ctx, principal, 200)
    with pytest.raises(TooManyRequests):
        await reserve(ctx, principal, 1)


async def test_paid_key_with_overage_accrues_past_limit(ctx: AppContext) -> None:
    principal = await principal_of(
        ctx, (await make_account(ctx, "developer", overage=True)).live_key
    )
    await reserve(ctx, principal, 5_000)
    await reserve(ctx, principal, 10)
    assert await used(ctx, principal) == 5_010
    async with ctx.sessionmaker() as session:
        report = await usage.usage_report(session, principal, ctx.clock.now())
    assert report["lookup"]["remaining"] == 0
    assert report["lookup"]["used"] == 5_010


async def test_paid_key_without_overage_stops(ctx: AppContext) -> None:
    principal = await principal_of(ctx, (await make_account(ctx, "developer")).live_key)
    await reserve(ctx, principal, 4_990)
    with pytest.raises(TooManyRequests):
        await reserve(ctx, principal, 11)
    assert await used(ctx, principal) == 4_990


async def test_release_gives_units_back_to_their_month(ctx: AppContext, clock) -> None:  # type: ignore[no-untyped-def]
    principal = await principal_of(ctx, (await make_account(ctx, "pro")).live_key)
    clock.set(datetime(2026, 11, 30, 23, 59, 59, tzinfo=UTC))
    reservation = await reserve(ctx, principal, 10)
    clock.advance(timedelta(seconds=2))  # now December
    async with ctx.transaction() as session:
        await usage.release(session, reservation)
    assert await used(ctx, principal) == 0
    clock.set(datetime(2026, 11, 30, 12, tzinfo=UTC))
    assert await used(ctx, principal) == 0


async def test_meters_reset_each_utc_month(ctx: AppContext, clock) -> None:  # type: ignore[no-untyped-def]
    principal = await principal_of(ctx, (await make_account(ctx, "free")).live_key)
    await reserve(ctx, principal, 200)
    clock.set(datetime(2026, 12, 1, 0, 0, tzinfo=UTC))
    await reserve(ctx, principal, 1)
    assert await used(ctx, principal) == 1


async def test_parallel_reservations_never_overspend(ctx: AppContext) -> None:
    principal = await principal_of(ctx, (await make_account(ctx, "free")).live_key)
    await reserve(ctx, principal, 190)

    async def attempt() -> bool:
        try:
            await reserve(ctx, principal, 1)
            return True
        except TooManyRequests:
            return False

    outcomes = await asyncio.gather(*(attempt() for _ in range(40)))
    assert sum(outcomes) == 10
    assert await used(ctx, principal) == 200


async def test_parallel_first_use_creates_one_meter(ctx: AppContext) -> None:
    principal = await principal_of(ctx, (await make_account(ctx, "free")).live_key)
    results = await asyncio.gather(*(reserve(ctx, principal, 1) for _ in range(20)))
    assert sorted(r.used_after for r in results) == list(range(1, 21))
