"""A short, bounded in-process cache of resolved API keys for the hot lookup path.

Resolving a key costs a database round trip; a cached status lookup must not pay it on every
call (design.md, "The hot path"). An entry is served for about `ttl` seconds (±20%); after that
it is refreshed ahead: the cached principal is still answered while one background read per key
replaces it, so a busy key never waits for its own re-read (on a loaded server that synchronous
read took over 100 ms: every thread hop of the async driver waits a whole pass of the event
loop). A key unused for a further `ttl` expires and is read synchronously on its next use.

So a key re-planned by another process is seen within about `ttl` plus one read, or at once
when Redis carries the change (account/key_invalidation.py); deactivation is also enforced by
every credit reservation's own `is_active` check (permit/lookup/fast/repository.py,
usage.reserve), and `account.service.deactivate_key` in this process drops the entry at once.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import random
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass

from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from permitapi.account import key_caches
from permitapi.account.service import Principal, hash_key, looks_like_key, resolve_key

DEFAULT_TTL_SECONDS = 15.0
# Entries expire at spread-out moments, so keys resolved together are not re-read together.
TTL_JITTER = 0.2
DEFAULT_MAX_ENTRIES = 10_000

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class _Entry:
    refresh_at: float
    expires_at: float
    principal: Principal


class KeyCache:
    def __init__(
        self,
        ttl: float = DEFAULT_TTL_SECONDS,
        max_entries: int = DEFAULT_MAX_ENTRIES,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.ttl = ttl
        self.max_entries = max_entries
        self._clock = clock
        self._entries: OrderedDict[str, _Entry] = OrderedDict()
        self._refreshing: dict[str, asyncio.Task[None]] = {}
        # Bumped by every invalidation: a read that started before one must not cache what it
        # read (it may be the row as it was before the change).
        self._generation = 0
        key_caches.register(self)

    async def resolve(
        self, maker: async_sessionmaker[AsyncSession], raw_key: str
    ) -> Principal | None:
        """The principal of an active key (cached), or None. Unknown keys are not cached, so
        a flood of bad keys cannot evict good ones."""
        if not looks_like_key(raw_key):
            return None
        key_hash = hash_key(raw_key)
        entry = self._entries.get(key_hash)
        now = self._clock()
        if entry is not None and now < entry.expires_at:
            if now >= entry.refresh_at and key_hash not in self._refreshing:
                self._refresh_in_background(maker, raw_key, key_hash)
            return entry.principal
        return await self._read(maker, raw_key, key_hash)

    async def _read(
        self, maker: async_sessionmaker[AsyncSession], raw_key: str, key_hash: str
    ) -> Principal | None:
        generation = self._generation
        async with maker() as session:
            principal = await resolve_key(session, raw_key)
        if principal is None:
            self._entries.pop(key_hash, None)
            return None
        if generation != self._generation:
            return principal
        now = self._clock()
        refresh_at = now + self.ttl * random.uniform(1 - TTL_JITTER, 1 + TTL_JITTER)
        self._entries[key_hash] = _Entry(refresh_at, refresh_at + self.ttl, principal)
        self._entries.move_to_end(key_hash)
        while len(self._entries) > self.max_entries:
            self._entries.popitem(last=False)
        return principal

    def _refresh_in_background(
        self, maker: async_sessionmaker[AsyncSession], raw_key: str, key_hash: str
    ) -> None:
        async def refresh() -> None:
            try:
                await self._read(maker, raw_key, key_hash)
            except Exception:
                # The entry stays until it expires; its next use then reads synchronously and
                # surfaces the failure to that request.
                log.warning("background refresh of a cached API key failed", exc_info=True)
            finally:
                if self._refreshing.get(key_hash) is asyncio.current_task():
                    self._refreshing.pop(key_hash)

        self._refreshing[key_hash] = asyncio.get_running_loop().create_task(refresh())

    def invalidate(self, key_hash: str) -> None:
        self._generation += 1
        self._entries.pop(key_hash, None)
        task = self._refreshing.pop(key_hash, None)
        if task is not None:
            # A read that started before the deactivation must not put the key back.
            task.cancel()

    def invalidate_account(self, account_id: str) -> None:
        """Drop every key of one account (a plan or add-on change); a scan, as such changes
        are rare and the cache is bounded."""
        for key_hash, entry in list(self._entries.items()):
            if entry.principal.account_id == account_id:
                self.invalidate(key_hash)
        self._generation += 1

    def clear(self) -> None:
        self._generation += 1
        self._entries.clear()

    async def aclose(self) -> None:
        """Stop background refreshes (before the engine they read from is disposed)."""
        tasks = list(self._refreshing.values())
        for task in tasks:
            task.cancel()
        for task in tasks:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
