"""The hot path's SQL, on the raw drivers (asyncpg, aiosqlite).

A cached status lookup is the request the service answers most, and SQLAlchemy's execution
machinery costs more than the database round trip itself (research/deps.md §3: Core ≈ 0.19x
and the raw driver ≈ 0.5x of a bare endpoint). So this one statement pair runs on the driver:
reserve the lookup credit (conditional UPDATE ... RETURNING: the limit check is the WHERE) and
read the permit's cache row, in ONE round trip on PostgreSQL (a data-modifying CTE). The same
statement re-checks that the key is still active: the caller's key came from a short in-process
cache, and a key deactivated by another process (the CLI) must stop working at once.

On SQLite the exchange runs synchronously on the event loop: a local WAL write of one row
takes tens of microseconds, less than the thread hops an async driver needs for it; a short
busy timeout bounds the stall, and a locked database sends the caller down the full path.
The reservation commits on its own (autocommit), so a fresh hit costs two statements.

The reservation is made whether or not the row turns out fresh; callers taking the full path
afterwards reuse it instead of reserving again. `used` is None when the statement could not
reserve (no meter row yet this month, or the limit reached): the full path decides then.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from typing import Any

from permitapi.account import plan_sql
from permitapi.account.plans import Meter
from permitapi.db.base import stored_utc
from permitapi.permit.repository import CachedPermit

# The account's plan, add-on and overage flags are read in the reserving statement itself
# (account/plan_sql.py): a plan changed by another process decides this very reservation.
_ACCOUNT_OF_KEY = "api_keys JOIN accounts ON accounts.id = api_keys.account_id"


def _pg_statement() -> str:
    included = plan_sql.as_text("included_units", Meter.LOOKUP, "postgresql")
    may_exceed = plan_sql.as_text("may_exceed", Meter.LOOKUP, "postgresql")
    return f"""
WITH reserved AS (
    UPDATE usage_meters SET used = used + $1
    WHERE api_key_id = $2 AND meter = 'lookup' AND period = $3
      AND EXISTS (
        SELECT 1 FROM {_ACCOUNT_OF_KEY}
        WHERE api_keys.id = $2 AND api_keys.is_active
          AND ({may_exceed} OR usage_meters.used + $1 <= {included})
      )
    RETURNING used
)
SELECT (SELECT used FROM reserved),
       COALESCE((SELECT is_active FROM api_keys WHERE id = $2), false),
       (SELECT {included} FROM {_ACCOUNT_OF_KEY} WHERE api_keys.id = $2),
       p.permit_id, p.jurisdiction, p.display_number,
       p.raw_status, p.normalized_status, p.permit_type, p.snapshot->>'address',
       p.snapshot->>'work_description', p.fetched_at, p.last_attempted_at,
       p.last_failure_reason, p.snapshot IS NOT NULL
FROM (SELECT 1) AS one
LEFT JOIN permits AS p ON p.jurisdiction = $4 AND p.permit_number = $5
"""


def _sqlite_reserve() -> str:
    included = plan_sql.as_text("included_units", Meter.LOOKUP, "sqlite")
    may_exceed = plan_sql.as_text("may_exceed", Meter.LOOKUP, "sqlite")
    return f"""
UPDATE usage_meters SET used = used + :units
WHERE api_key_id = :key AND meter = 'lookup' AND period = :period
  AND EXISTS (
    SELECT 1 FROM {_ACCOUNT_OF_KEY}
    WHERE api_keys.id = :key AND api_keys.is_active
      AND ({may_exceed} OR usage_meters.used + :units <= {included})
  )
RETURNING used, (SELECT {included} FROM {_ACCOUNT_OF_KEY} WHERE api_keys.id = :key)
"""


PG_RESERVE_AND_READ = _pg_statement()
SQLITE_RESERVE = _sqlite_reserve()

SQLITE_KEY_ACTIVE = "SELECT is_active FROM api_keys WHERE id = ?"
PG_KEY_ACTIVE = "SELECT is_active FROM api_keys WHERE id = $1"

SQLITE_READ = """
SELECT permit_id, jurisdiction, display_number, raw_status, normalized_status, permit_type,
       json_extract(snapshot, '$.address'), json_extract(snapshot, '$.work_description'),
       fetched_at, last_attempted_at, last_failure_reason, snapshot IS NOT NULL
FROM permits WHERE jurisdiction = ? AND permit_number = ?
"""


@dataclass(frozen=True, slots=True)
class ReserveAndRead:
    used: int | None
    limit: int | None  # the included credits as the account's plan says now, when reserved
    row: CachedPermit | None
    key_active: bool


def _cached(values: Any) -> CachedPermit | None:
    if values is None or values[0] is None:
        return None
    v = list(values)
    return CachedPermit(
        permit_id=v[0],
        jurisdiction=v[1],
        display_number=v[2],
        raw_status=v[3],
        normalized_status=v[4],
        permit_type=v[5],
        address=v[6],
        work_description=v[7],
        fetched_at=stored_utc(v[8]),
        last_attempted_at=stored_utc(v[9]),
        last_failure_reason=v[10],
        has_snapshot=bool(v[11]),
    )


async def pg_reserve_and_read(
    connection: Any,
    *,
    units: int,
    api_key_id: str,
    period: str,
    jurisdiction: str,
    permit_number: str,
) -> ReserveAndRead:
    record = await connection.fetchrow(
        PG_RESERVE_AND_READ, units, api_key_id, period, jurisdiction, permit_number
    )
    used = record[0]
    return ReserveAndRead(
        used, None if used is None else record[2], _cached(tuple(record)[3:]), bool(record[1])
    )


def sqlite_reserve_and_read(
    connection: sqlite3.Connection,
    *,
    units: int,
    api_key_id: str,
    period: str,
    jurisdiction: str,
    permit_number: str,
) -> ReserveAndRead:
    """Two statements on a synchronous connection in autocommit mode: the reservation is its
    own write transaction, then the cache row is read. The read needs no atomicity with the
    reservation (a row refreshed in between is simply newer), and the key-active check runs only
    when nothing was reserved (the reservation's own condition proves an active key).

    Raises sqlite3.OperationalError when the reservation meets a lock held past the connection's
    short busy timeout (nothing is kept then). A read that fails after the reservation committed
    returns the reservation without a row, so the caller's full path reuses it.
    """
    reserved = connection.execute(
        SQLITE_RESERVE, {"units": units, "key": api_key_id, "period": period}
    ).fetchall()
    limit: int | None = None
    if reserved:
        used: int | None = reserved[0][0]
        limit = reserved[0][1]
        active = True
    else:
        used = None
        active = sqlite_key_active(connection, api_key_id)
    try:
        row = connection.execute(SQLITE_READ, (jurisdiction, permit_number)).fetchone()
    except sqlite3.Error:
        if used is None:
            raise
        row = None
    return ReserveAndRead(used, limit, _cached(row), active)


async def pg_key_active(connection: Any, api_key_id: str) -> bool:
    return bool(await connection.fetchval(PG_KEY_ACTIVE, api_key_id))


def sqlite_key_active(connection: sqlite3.Connection, api_key_id: str) -> bool:
    found = connection.execute(SQLITE_KEY_ACTIVE, (api_key_id,)).fetchone()
    return bool(found and found[0])
