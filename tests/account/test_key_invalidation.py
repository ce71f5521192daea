"""Key-cache invalidation through Redis (account/key_invalidation.py): a change announced by
one process drops the key, or every key of the account, from the caches of a process that
listens; Redis down costs a warning, never an error. Real Redis, real database."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import uuid
from collections.abc import AsyncIterator

import pytest

from permitapi.account import key_invalidation
from permitapi.account import repository as account_repository
from permitapi.account import service as accounts
from permitapi.account.key_cache import KeyCache
from permitapi.account.plans import PlanName
from permitapi.context import AppContext
from tests.support.accounts import make_account
from tests.support.shared_redis import REDIS_URL

UNREACHABLE = "redis://127.0.0.1:1/0"


@contextlib.asynccontextmanager
async def listener(namespace: str) -> AsyncIterator[None]:
    subscribed = asyncio.Event()
    task = asyncio.get_running_loop().create_task(
        key_invalidation.listen(REDIS_URL, namespace, subscribed)
    )
    try:
        await asyncio.wait_for(subscribed.wait(), timeout=5)
        yield
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task


async def eventually_gone(cache: KeyCache, key_hash: str) -> None:
    for _ in range(100):
        if key_hash not in cache._entries:
            return
        await asyncio.sleep(0.02)
    raise AssertionError("the announced invalidation never reached the cache")


async def test_an_announced_plan_change_drops_every_key_of_the_account(ctx: AppContext) -> None:
    created = await make_account(ctx, "free")
    bystander = (await make_account(ctx, "free")).live_key
    cache = KeyCache(ttl=3600)
    for key in (created.live_key, created.sandbox_key, bystander):
        assert await cache.resolve(ctx.sessionmaker, key) is not None
    async with ctx.transaction() as session:  # another process changes the row...
        assert await account_repository.set_plan(session, created.account_id, "pro")
    namespace = f"permitapi-test-{uuid.uuid4().hex}"
    async with listener(namespace):
        # ...and announces it after its commit.
        message = key_invalidation.ACCOUNT_PREFIX + created.account_id
        assert await key_invalidation.announce(REDIS_URL, namespace, message)
        await eventually_gone(cache, accounts.hash_key(created.live_key))
    assert accounts.hash_key(created.sandbox_key) not in cache._entries
    assert accounts.hash_key(bystander) in cache._entries
    principal = await cache.resolve(ctx.sessionmaker, created.live_key)
    assert principal is not None
    assert principal.plan.name == PlanName.PRO


async def test_an_announced_deactivation_drops_the_key(ctx: AppContext) -> None:
    key = (await make_account(ctx, "pro")).live_key
    cache = KeyCache(ttl=3600)
    assert await cache.resolve(ctx.sessionmaker, key) is not None
    async with ctx.transaction() as session:
        assert await account_repository.deactivate_key(
            session, accounts.hash_key(key), ctx.clock.now()
        )
    namespace = f"permitapi-test-{uuid.uuid4().hex}"
    async with listener(namespace):
        message = key_invalidation.KEY_PREFIX + accounts.hash_key(key)
        assert await key_invalidation.announce(REDIS_URL, namespace, message)
        await eventually_gone(cache, accounts.hash_key(key))
    assert await cache.resolve(ctx.sessionmaker, key) is None


async def test_other_namespaces_do_not_hear_it(ctx: AppContext) -> None:
    key = (await make_account(ctx, "pro")).live_key
    cache = KeyCache(ttl=3600)
    assert await cache.resolve(ctx.sessionmaker, key) is not None
    async with listener(f"permitapi-test-{uuid.uuid4().hex}"):
        message = key_invalidation.KEY_PREFIX + accounts.hash_key(key)
        assert await key_invalidation.announce(REDIS_URL, f"other-{uuid.uuid4().hex}", message)
        await asyncio.sleep(0.3)
    assert accounts.hash_key(key) in cache._entries


async def test_set_plan_in_this_process_drops_the_accounts_keys_at_once(ctx: AppContext) -> None:
    created = await make_account(ctx, "free")
    cache = KeyCache(ttl=3600)
    assert await cache.resolve(ctx.sessionmaker, created.live_key) is not None
    async with ctx.transaction() as session:
        await accounts.set_plan(session, created.account_id, PlanName.PRO)
    assert accounts.hash_key(created.live_key) not in cache._entries


async def test_a_read_overtaken_by_an_invalidation_is_not_cached(ctx: AppContext) -> None:
    key = (await make_account(ctx, "free")).live_key
    cache = KeyCache(ttl=3600)
    reading = asyncio.get_running_loop().create_task(cache.resolve(ctx.sessionmaker, key))
    await asyncio.sleep(0)  # the read has started
    cache.invalidate(accounts.hash_key(key))
    assert await reading is not None  # its caller is answered...
    assert accounts.hash_key(key) not in cache._entries  # ...but what it read is not kept


async def test_redis_down_is_a_warning_not_an_error(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.WARNING, logger="permitapi.account.key_invalidation")
    assert not await key_invalidation.announce(UNREACHABLE, "permitapi", "key:x")
    task = asyncio.get_running_loop().create_task(key_invalidation.listen(UNREACHABLE, "permitapi"))
    await asyncio.sleep(1.0)
    assert not task.done()  # still trying, quietly
    task.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await task
    warnings = [r.getMessage() for r in caplog.records]
    assert any("other processes' key caches expire" in w for w in warnings)
    assert any("key invalidations not received" in w for w in warnings)


async def test_unknown_messages_are_ignored(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.WARNING, logger="permitapi.account.key_invalidation")
    key_invalidation.apply("nonsense")
    assert "unknown key invalidation message" in caplog.text
