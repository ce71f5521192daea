"""The fresh-cache-hit fast path of status lookups (design.md, "The hot path").

Authentication comes from the in-process key cache and the burst window from memory; what
remains is one database round trip on PostgreSQL (reserve + read, see `hot_repository`) on a
few raw asyncpg connections (`hot_connections`), or one short synchronous transaction on a
dedicated sqlite3 connection. No SQLAlchemy session, no ORM, no connection held beyond the
statement.
"""

from __future__ import annotations

import asyncio
import sqlite3
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy.engine.url import make_url

from permitapi.account import auth
from permitapi.account.plans import Meter
from permitapi.account.service import Principal
from permitapi.context import AppContext
from permitapi.db.engine import apply_sqlite_pragmas
from permitapi.kit.clock import period_of
from permitapi.permit.lookup.fast import repository as hot_repository
from permitapi.permit.lookup.fast.connections import HotConnections
from permitapi.permit.repository import CachedPermit
from permitapi.usage.service import Reservation

_KEY = "permit.hot_path"
POOL_SIZE = 8
# The synchronous SQLite exchange blocks the event loop while it waits for a lock: keep short.
SQLITE_HOT_BUSY_TIMEOUT_MS = 20


@dataclass
class _Drivers:
    pg: HotConnections | None = None
    sqlite: sqlite3.Connection | None = None


async def _drivers(ctx: AppContext) -> _Drivers:
    drivers = ctx.extras.get(_KEY)
    if isinstance(drivers, _Drivers):
        return drivers
    lock = ctx.extras.setdefault(_KEY + ".init", asyncio.Lock())
    async with lock:
        drivers = ctx.extras.get(_KEY)
        if isinstance(drivers, _Drivers):
            return drivers
        url = make_url(ctx.settings.database_url)
        drivers = _Drivers()
        if url.get_backend_name() == "postgresql":
            dsn = url.set(drivername="postgresql").render_as_string(hide_password=False)
            drivers.pg = HotConnections(dsn, POOL_SIZE)
        else:
            connection = sqlite3.connect(url.database or ":memory:", isolation_level=None)
            apply_sqlite_pragmas(connection, SQLITE_HOT_BUSY_TIMEOUT_MS)
            drivers.sqlite = connection
        ctx.extras[_KEY] = drivers
        return drivers


async def close(ctx: AppContext) -> None:
    drivers = ctx.extras.pop(_KEY, None)
    if not isinstance(drivers, _Drivers):
        return
    if drivers.pg is not None:
        await drivers.pg.close()
    if drivers.sqlite is not None:
        drivers.sqlite.close()


async def ensure_key_active(ctx: AppContext, principal: Principal) -> None:
    """Refuse a key deactivated since this process cached it (401 invalid_api_key). Live keys
    get this from their reservation's own condition; sandbox calls reserve nothing, so without
    this one indexed read a deactivated sandbox key would answer until its cache entry aged out
    (`permitapi keys deactivate` runs in another process, and Redis may carry no message)."""
    drivers = await _drivers(ctx)
    if drivers.pg is not None:
        async with drivers.pg.connection() as connection:
            active = await hot_repository.pg_key_active(connection, principal.api_key_id)
    else:
        assert drivers.sqlite is not None
        active = hot_repository.sqlite_key_active(drivers.sqlite, principal.api_key_id)
    if not active:
        auth.refuse_deactivated(principal)


@dataclass(frozen=True, slots=True)
class HotRead:
    reservation: Reservation | None
    row: CachedPermit | None
    row_read: bool = True  # False: the exchange did not happen (`row` says nothing)


async def reserve_and_read(
    ctx: AppContext,
    principal: Principal,
    units: int,
    jurisdiction: str,
    permit_number: str,
    now: datetime,
) -> HotRead:
    """Reserve `units` lookup credits and read the cache row in one exchange. The reservation
    is None when it could not be made here (the full path's `usage.reserve` decides)."""
    drivers = await _drivers(ctx)
    period = period_of(now)
    arguments: dict[str, Any] = {
        "units": units,
        "api_key_id": principal.api_key_id,
        "period": period,
        "jurisdiction": jurisdiction,
        "permit_number": permit_number,
    }
    if drivers.pg is not None:
        async with drivers.pg.connection() as connection:
            result = await hot_repository.pg_reserve_and_read(connection, **arguments)
    else:
        assert drivers.sqlite is not None
        try:
            result = hot_repository.sqlite_reserve_and_read(drivers.sqlite, **arguments)
        except sqlite3.OperationalError:
            return HotRead(None, None, row_read=False)  # locked: the full path waits
    if not result.key_active:
        auth.refuse_deactivated(principal)
    reservation = None
    if result.used is not None and result.limit is not None:
        reservation = Reservation(
            principal.api_key_id, Meter.LOOKUP, period, units, result.used, result.limit
        )
    return HotRead(reservation, result.row)
