"""The process-wide context every request and job uses: settings, storage, clock, sources."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession, async_sessionmaker

from permitapi.config import Settings
from permitapi.kit.clock import Clock
from permitapi.sources.gateway import SourceGateway
from permitapi.sources.registry import Directory
from permitapi.usage.burst import BurstLimiter


@dataclass
class AppContext:
    settings: Settings
    engine: AsyncEngine
    sessionmaker: async_sessionmaker[AsyncSession]
    clock: Clock
    directory: Directory
    burst: BurstLimiter
    gateway: SourceGateway  # services reach the portals only through this
    extras: dict[str, Any] = field(default_factory=dict)

    def transaction(self) -> Any:
        """`async with ctx.transaction() as session:` — commits on success, rolls back on error."""
        return _Transaction(self.sessionmaker)


class _Transaction:
    def __init__(self, maker: async_sessionmaker[AsyncSession]) -> None:
        self._maker = maker
        self._session: AsyncSession | None = None

    async def __aenter__(self) -> AsyncSession:
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
            await self._session.close()
