"""A short, bounded in-process cache of resolved API keys for the hot lookup path.

Resolving a key costs a database round trip; a cached status lookup must not pay it on every
call (design.md, "The hot path"). Entries live about `ttl` seconds (±20%), so a key deactivated or
re-planned by another process stops working within that bound; a deactivation through
`account.service.deactivate_key` in this process drops the entry at once.
"""

from __future__ import annotations

import random
import time
import weakref
from collections import OrderedDict

from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from permitapi.account.service import Principal, hash_key, looks_like_key, resolve_key

DEFAULT_TTL_SECONDS = 15.0
# Entries expire at spread-out moments, so keys resolved together are not re-read together.
TTL_JITTER = 0.2
DEFAULT_MAX_ENTRIES = 10_000

_caches: weakref.WeakSet[KeyCache] = weakref.WeakSet()


class KeyCache:
    def __init__(
        self, ttl: float = DEFAULT_TTL_SECONDS, max_entries: int = DEFAULT_MAX_ENTRIES
    ) -> None:
        self.ttl = ttl
        self.max_entries = max_entries
        self._entries: OrderedDict[str, tuple[float, Principal]] = OrderedDict()
        _caches.add(self)

    async def resolve(
        self, maker: async_sessionmaker[AsyncSession], raw_key: str
    ) -> Principal | None:
        """The principal of an active key (cached), or None. Unknown keys are not cached, so
        a flood of bad keys cannot evict good ones."""
        if not looks_like_key(raw_key):
            return None
        key_hash = hash_key(raw_key)
        entry = self._entries.get(key_hash)
        now = time.monotonic()
        if entry is not None and entry[0] > now:
            return entry[1]
        async with maker() as session:
            principal = await resolve_key(session, raw_key)
        if principal is None:
            self._entries.pop(key_hash, None)
            return None
        ttl = self.ttl * random.uniform(1 - TTL_JITTER, 1 + TTL_JITTER)
        self._entries[key_hash] = (now + ttl, principal)
        self._entries.move_to_end(key_hash)
        while len(self._entries) > self.max_entries:
            self._entries.popitem(last=False)
        return principal

    def invalidate(self, key_hash: str) -> None:
        self._entries.pop(key_hash, None)

    def clear(self) -> None:
        self._entries.clear()


def invalidate_everywhere(key_hash: str) -> None:
    """Drop a key from every cache of this process (called on deactivation)."""
    for cache in list(_caches):
        cache.invalidate(key_hash)
