"""Every live key cache of this process, so a change to a key or an account reaches all of
them: `account.service` (deactivation, re-plan), the usage meter and the Redis listener call
these without importing the cache itself, which is built on `account.service`."""

from __future__ import annotations

import weakref
from typing import Protocol


class InvalidatableCache(Protocol):
    def invalidate(self, key_hash: str) -> None: ...

    def invalidate_account(self, account_id: str) -> None: ...

    def clear(self) -> None: ...


_caches: weakref.WeakSet[InvalidatableCache] = weakref.WeakSet()


def register(cache: InvalidatableCache) -> None:
    """Reach `cache` from the `*_everywhere` calls for as long as it lives."""
    _caches.add(cache)


def invalidate_everywhere(key_hash: str) -> None:
    """Drop a key from every cache of this process (called on deactivation)."""
    for cache in list(_caches):
        cache.invalidate(key_hash)


def invalidate_account_everywhere(account_id: str) -> None:
    """Drop an account's keys from every cache of this process (a plan change)."""
    for cache in list(_caches):
        cache.invalidate_account(account_id)


def clear_everywhere() -> None:
    for cache in list(_caches):
        cache.clear()
