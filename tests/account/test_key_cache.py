"""The in-process key cache (account/key_cache.py) on a real database: served while fresh,
refreshed ahead in the background once old, read synchronously once expired, and never
resurrecting a deactivated key."""

from __future__ import annotations

import asyncio

import pytest

from permitapi.account import repository as account_repository
from permitapi.account import service as accounts
from permitapi.account.key_cache import TTL_JITTER, KeyCache
from permitapi.account.plans import PlanName
from permitapi.context import AppContext
from tests.support.accounts import make_account

TTL = 10.0
FRESH = TTL * (1 - TTL_JITTER) - 0.1  # before any entry's refresh point
OLD = TTL * (1 + TTL_JITTER) + 0.1  # past every entry's refresh point, before its expiry
GONE = 2 * TTL * (1 + TTL_JITTER) + 0.1  # past every entry's expiry


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def ticks() -> Clock:
    return Clock()


async def _set_plan(ctx: AppContext, raw_key: str, plan: PlanName) -> None:
    """Another process re-plans the account: the row changes, this process is not told."""
    async with ctx.transaction() as session:
        principal = await accounts.resolve_key(session, raw_key)
        assert principal is not None
        assert await account_repository.set_plan(session, principal.account_id, plan.value)


async def _settle(cache: KeyCache) -> None:
    for _ in range(200):
        if not cache._refreshing:
            return
        await asyncio.sleep(0.01)
    raise AssertionError("the background refresh did not finish")


async def test_fresh_entries_are_served_without_a_read(ctx: AppContext, ticks: Clock) -> None:
    key = (await make_account(ctx, "free")).live_key
    cache = KeyCache(ttl=TTL, clock=ticks)
    first = await cache.resolve(ctx.sessionmaker, key)
    assert first is not None
    assert first.plan.name == PlanName.FREE
    await _set_plan(ctx, key, PlanName.PRO)
    ticks.now += FRESH
    cached = await cache.resolve(ctx.sessionmaker, key)
    assert cached is not None
    assert cached.plan.name == PlanName.FREE  # not re-read yet


async def test_an_old_entry_is_answered_while_it_is_refreshed_in_the_background(
    ctx: AppContext, ticks: Clock
) -> None:
    key = (await make_account(ctx, "free")).live_key
    cache = KeyCache(ttl=TTL, clock=ticks)
    await cache.resolve(ctx.sessionmaker, key)
    await _set_plan(ctx, key, PlanName.PRO)
    ticks.now += OLD
    stale = await cache.resolve(ctx.sessionmaker, key)
    assert stale is not None
    assert stale.plan.name == PlanName.FREE  # answered at once, from the cache
    assert len(cache._refreshing) == 1
    again = await cache.resolve(ctx.sessionmaker, key)
    assert again is not None
    assert len(cache._refreshing) == 1
    await _settle(cache)
    refreshed = await cache.resolve(ctx.sessionmaker, key)
    assert refreshed is not None
    assert refreshed.plan.name == PlanName.PRO


async def test_an_expired_entry_is_read_synchronously(ctx: AppContext, ticks: Clock) -> None:
    key = (await make_account(ctx, "free")).live_key
    cache = KeyCache(ttl=TTL, clock=ticks)
    await cache.resolve(ctx.sessionmaker, key)
    await _set_plan(ctx, key, PlanName.PRO)
    ticks.now += GONE
    principal = await cache.resolve(ctx.sessionmaker, key)
    assert principal is not None
    assert principal.plan.name == PlanName.PRO
    assert not cache._refreshing


async def test_a_key_deactivated_elsewhere_is_dropped_by_its_refresh(
    ctx: AppContext, ticks: Clock
) -> None:
    key = (await make_account(ctx, "pro")).live_key
    cache = KeyCache(ttl=TTL, clock=ticks)
    await cache.resolve(ctx.sessionmaker, key)
    async with ctx.transaction() as session:  # as another process (the CLI) would
        assert await account_repository.deactivate_key(
            session, accounts.hash_key(key), ctx.clock.now()
        )
    ticks.now += OLD
    await cache.resolve(ctx.sessionmaker, key)  # still cached; starts the refresh
    await _settle(cache)
    assert await cache.resolve(ctx.sessionmaker, key) is None


async def test_invalidation_cancels_a_refresh_in_flight_and_close_stops_the_rest(
    ctx: AppContext, ticks: Clock
) -> None:
    key = (await make_account(ctx, "pro")).live_key
    other = (await make_account(ctx, "pro")).live_key
    cache = KeyCache(ttl=TTL, clock=ticks)
    await cache.resolve(ctx.sessionmaker, key)
    await cache.resolve(ctx.sessionmaker, other)
    ticks.now += OLD
    await cache.resolve(ctx.sessionmaker, key)
    await cache.resolve(ctx.sessionmaker, other)
    assert len(cache._refreshing) == 2
    cache.invalidate(accounts.hash_key(key))
    await asyncio.sleep(0.2)
    assert accounts.hash_key(key) not in cache._entries
    await cache.aclose()
    assert not cache._refreshing
