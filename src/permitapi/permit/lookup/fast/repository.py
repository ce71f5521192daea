"""The hot path's SQL, on the raw drivers (asyncpg, sqlite3).

A cached status lookup is the request the service answers most, and SQLAlchemy's execution
machinery costs more than the database round trip itself (research/deps.md §3: Core ≈ 0.19x
and the raw driver ≈ 0.5x of a bare endpoint). So this one exchange runs on the driver:
reserve the lookup credit (conditional UPDATE ... RETURNING: the limit check is the WHERE) and
read the permit's cache row, in ONE round trip on PostgreSQL (a data-modifying CTE). The same
statement re-checks that the key is still active: the caller's key came from a short in-process
cache, and a key deactivated by another process (the CLI) must stop working at once.

On SQLite the exchange runs synchronously on the event loop: a local WAL write of one row
takes tens of microseconds, less than the thread hops an async driver needs for it; a short
busy timeout bounds the stall, and a locked database sends the caller down the full path.
The reservation and the read are one short write transaction (two statements between BEGIN
IMMEDIATE and COMMIT): the reservation's RETURNING cannot carry the limit on SQLite.

The SQL is not written here: it is compiled from the normal path's expressions (see below and
db/raw_statement.py), so the two paths cannot disagree on a rule.

The reservation is made whether or not the row turns out fresh; callers taking the full path
afterwards reuse it instead of reserving again. `used` is None when the statement could not
reserve (no meter row yet this month, or the limit reached): the full path decides then.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Integer, String, Subquery, bindparam, false, func, literal, null, select

from permitapi.account import repository as accounts
from permitapi.account.plans import Meter
from permitapi.db.raw_statement import Driver, RawStatement, compile_for
from permitapi.permit import repository as permits
from permitapi.permit.models import PermitRecord
from permitapi.permit.repository import CachedPermit
from permitapi.usage import repository as usage

# The statements below are compiled from the normal path's own expressions: the reservation
# (`usage.repository.reservation`, its limit check and the key's activity in the WHERE), the
# limit the headers show (`usage.repository.limit_of`), the key check
# (`account.repository.key_active_query`) and the cache row's projection
# (`permit.repository.CACHED_COLUMNS`). Nothing here restates a rule.
_UNITS = bindparam("units", type_=Integer)
_KEY = bindparam("api_key_id", type_=String)
_PERIOD = bindparam("period", type_=String)
_JURISDICTION = bindparam("jurisdiction", type_=String)
_NUMBER = bindparam("permit_number", type_=String)
_PARAMETERS = {"units", "api_key_id", "period", "jurisdiction", "permit_number"}

_RESERVE = usage.reservation(_KEY, Meter.LOOKUP, _PERIOD, _UNITS)


def _read(used: Any) -> Any:
    """(used, key active, limit, *the cache row) with the row left-joined, so the answer has
    one row whether or not the permit is stored."""
    one: Subquery = select(literal(1)).subquery("one")
    return (
        select(
            used,
            func.coalesce(accounts.key_active_query(_KEY).scalar_subquery(), false()),
            usage.limit_of(_KEY, Meter.LOOKUP),
            *permits.CACHED_COLUMNS,
        )
        .select_from(one)
        .outerjoin(PermitRecord, permits.identity(_JURISDICTION, _NUMBER))
    )


def _pg_reserve_and_read() -> RawStatement:
    # One round trip: the reservation is a data-modifying CTE of the read.
    reserved = _RESERVE.cte("reserved")
    statement = _read(select(reserved.c.used).scalar_subquery())
    return compile_for(statement, "asyncpg", _PARAMETERS)


def _key_active(driver: Driver) -> RawStatement:
    return compile_for(accounts.key_active_query(_KEY), driver, {"api_key_id"})


PG_RESERVE_AND_READ = _pg_reserve_and_read()
PG_KEY_ACTIVE = _key_active("asyncpg")
# SQLite renders RETURNING's columns unqualified, so the limit cannot be a subquery of the
# reservation's RETURNING (its join would be ambiguous): it is read with the row, as the normal
# path reads it right after its reservation (`usage.repository.try_consume`).
SQLITE_RESERVE = compile_for(_RESERVE, "sqlite3", {"units", "api_key_id", "period"})
SQLITE_READ = compile_for(_read(null()), "sqlite3", _PARAMETERS - {"units", "period"})
SQLITE_KEY_ACTIVE = _key_active("sqlite3")


@dataclass(frozen=True, slots=True)
class ReserveAndRead:
    used: int | None
    limit: int | None  # the included credits as the account's plan says now, when reserved
    row: CachedPermit | None
    key_active: bool


def _answer(used: int | None, values: Any) -> ReserveAndRead:
    """`values`: a row of `_read`."""
    limit = None if used is None else values[2]
    return ReserveAndRead(used, limit, permits.cached_permit(values[3:]), bool(values[1]))


async def pg_reserve_and_read(
    connection: Any,
    *,
    units: int,
    api_key_id: str,
    period: str,
    jurisdiction: str,
    permit_number: str,
) -> ReserveAndRead:
    arguments = PG_RESERVE_AND_READ.arguments(
        {
            "units": units,
            "api_key_id": api_key_id,
            "period": period,
            "jurisdiction": jurisdiction,
            "permit_number": permit_number,
        }
    )
    record = await connection.fetchrow(PG_RESERVE_AND_READ.sql, *arguments)
    return _answer(record[0], tuple(record))


def sqlite_reserve_and_read(
    connection: sqlite3.Connection,
    *,
    units: int,
    api_key_id: str,
    period: str,
    jurisdiction: str,
    permit_number: str,
) -> ReserveAndRead:
    """One short write transaction on a synchronous connection: the reservation, then the key's
    activity, the limit and the cache row, as the normal path reads the limit after reserving in
    its transaction (`usage.repository.try_consume`).

    Raises sqlite3.OperationalError when the transaction meets a lock held past the
    connection's short busy timeout, or fails on the way: it is rolled back then, so nothing is
    reserved and the caller's full path starts from scratch.
    """
    reserve = {"units": units, "api_key_id": api_key_id, "period": period}
    read = {"api_key_id": api_key_id, "jurisdiction": jurisdiction, "permit_number": permit_number}
    connection.execute("BEGIN IMMEDIATE")
    try:
        reserved = connection.execute(
            SQLITE_RESERVE.sql, SQLITE_RESERVE.arguments(reserve)
        ).fetchall()
        values = connection.execute(SQLITE_READ.sql, SQLITE_READ.arguments(read)).fetchone()
    except BaseException:
        connection.execute("ROLLBACK")
        raise
    connection.execute("COMMIT")
    return _answer(reserved[0][0] if reserved else None, values)


async def pg_key_active(connection: Any, api_key_id: str) -> bool:
    arguments = PG_KEY_ACTIVE.arguments({"api_key_id": api_key_id})
    return bool(await connection.fetchval(PG_KEY_ACTIVE.sql, *arguments))


def sqlite_key_active(connection: sqlite3.Connection, api_key_id: str) -> bool:
    arguments = SQLITE_KEY_ACTIVE.arguments({"api_key_id": api_key_id})
    found = connection.execute(SQLITE_KEY_ACTIVE.sql, arguments).fetchone()
    return bool(found and found[0])
