"""Engine construction for SQLite (embedded default) and PostgreSQL (production)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from sqlalchemy import event, text
from sqlalchemy.engine.url import make_url
from sqlalchemy.ext.asyncio import AsyncEngine, async_sessionmaker, create_async_engine
from sqlalchemy.ext.asyncio import AsyncSession as AsyncSession
from sqlalchemy.pool import NullPool

SQLITE_BUSY_TIMEOUT_MS = 15_000


def ensure_sqlite_directory(url: str) -> None:
    parsed = make_url(url)
    if parsed.get_backend_name() == "sqlite" and parsed.database not in (None, "", ":memory:"):
        Path(parsed.database).parent.mkdir(parents=True, exist_ok=True)


def apply_sqlite_pragmas(dbapi_connection: Any, busy_timeout_ms: int) -> None:
    """Every SQLite connection of the service, the fast path's own included: WAL lets readers
    proceed during a write; busy_timeout makes concurrent writers wait for the lock instead of
    failing, which is what the conditional meter UPDATEs rely on."""
    cursor = dbapi_connection.cursor()
    cursor.execute("PRAGMA journal_mode=WAL")
    cursor.execute(f"PRAGMA busy_timeout={busy_timeout_ms}")
    cursor.execute("PRAGMA synchronous=NORMAL")
    cursor.execute("PRAGMA foreign_keys=ON")
    cursor.close()


def _on_sqlite_connect(dbapi_connection: Any, _record: Any) -> None:
    apply_sqlite_pragmas(dbapi_connection, SQLITE_BUSY_TIMEOUT_MS)


def create_engine(url: str, *, pool_size: int = 20) -> AsyncEngine:
    ensure_sqlite_directory(url)
    if make_url(url).get_backend_name() == "sqlite":
        engine = create_async_engine(url, poolclass=NullPool if ":memory:" in url else None)
        event.listen(engine.sync_engine, "connect", _on_sqlite_connect)
        return engine
    return create_async_engine(
        url, pool_size=pool_size, max_overflow=pool_size, pool_pre_ping=False, pool_recycle=1800
    )


def create_sessionmaker(engine: AsyncEngine) -> async_sessionmaker[AsyncSession]:
    return async_sessionmaker(engine, expire_on_commit=False, autoflush=False)


async def ping(engine: AsyncEngine) -> None:
    """Raise unless the database answers a trivial query."""
    async with engine.connect() as connection:
        await connection.execute(text("SELECT 1"))
