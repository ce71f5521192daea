"""The process-wide context every request and job uses: settings, storage, clock, sources."""

from __future__ import annotations

import asyncio
import contextvars
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession, async_sessionmaker

from permitapi.account.key_cache import KeyCache
from permitapi.config import Settings
from permitapi.kit.burst import BurstLimiter
from permitapi.kit.clock import Clock
from permitapi.sources.gateway import SourceGateway
from permitapi.sources.http import PortalHttp
from permitapi.sources.registry import Directory


@dataclass
class AppContext:
    settings: Settings
    engine: AsyncEngine
    sessionmaker: async_sessionmaker[AsyncSession]
    clock: Clock
    directory: Directory
    burst: BurstLimiter
    http: PortalHttp  # the one outbound client (closed on shutdown via `gateway.aclose`)
    gateway: SourceGateway  # services reach the portals only through this
    keys: KeyCache = field(default_factory=KeyCache)
    extras: dict[str, Any] = field(default_factory=dict)
    _sqlite_writes: asyncio.Lock = field(default_factory=asyncio.Lock, repr=False)

    def transaction(self) -> Any:
        """`async with ctx.transaction() as session:` — commits on success, rolls back on error."""
        lock = self._sqlite_writes if self.settings.is_sqlite else None
        return _Transaction(self.sessionmaker, lock)


# SQLite has one writer at a time and its busy handler waits by sleeping (up to 100 ms a try),
# so concurrent transactions of one process queue on this lock instead. A transaction opened
# inside another in the same task does not take it again (that would deadlock).
_holding_sqlite_lock: contextvars.ContextVar[bool] = contextvars.ContextVar(
    "holding_sqlite_lock", default=False
)


class _Transaction:
    def __init__(
        self, maker: async_sessionmaker[AsyncSession], lock: asyncio.Lock | None = None
    ) -> None:
        self._maker = maker
        self._session: AsyncSession | None = None
        self._lock = lock if lock is not None and not _holding_sqlite_lock.get() else None
        self._token: contextvars.Token[bool] | None = None

    async def __aenter__(self) -> AsyncSession:
        if self._lock is not None:
            await self._lock.acquire()
            self._token = _holding_sqlite_lock.set(True)
        self._session = self._maker()
        await self._session.begin()
        return self._session

    async def __aexit__(self, exc_type: object, exc: object, tb: object) -> None:
        assert self._session is not None
        try:
            if exc_type is None:
                await self._session.commit()
            else:
                await self._session.rollback()
        finally:
            try:
                await self._session.close()
            finally:
                if self._lock is not None:
                    if self._token is not None:
                        _holding_sqlite_lock.reset(self._token)
                    self._lock.release()
