"""The SQLite half of the hot path's exchange (permit/lookup/fast/repository.py) on a
migrated database: one short write transaction on a fresh hit, and the edge cases around it."""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest
from sqlalchemy.engine.url import make_url

from permitapi.account import service as accounts
from permitapi.account.plans import PlanName
from permitapi.db.engine import create_engine, create_sessionmaker
from permitapi.permit.lookup.fast.repository import ReserveAndRead, sqlite_reserve_and_read
from tests.support import databases

NOW = datetime(2026, 11, 24, 12, 0, tzinfo=UTC)
PERIOD = "2026-11"


async def _create_key(url: str) -> str:
    engine = create_engine(url, pool_size=1)
    try:
        async with create_sessionmaker(engine)() as session, session.begin():
            created = await accounts.create_account(
                session, plan=PlanName.PRO, discovery_addon=False, overage_enabled=False, now=NOW
            )
            principal = await accounts.resolve_key(session, created.live_key)
            assert principal is not None
            return principal.api_key_id
    finally:
        await engine.dispose()


@pytest.fixture
def database(tmp_path: Path) -> str:
    """`<url>#<api key id>`: a migrated SQLite database holding one Pro key."""
    url = databases.migrated(databases.create_sqlite_database(tmp_path))
    return f"{url}#{asyncio.run(_create_key(url))}"


@pytest.fixture
def connection(database: str) -> Iterator[tuple[sqlite3.Connection, str]]:
    url, key_id = database.split("#")
    path = make_url(url).database
    assert path is not None
    raw = sqlite3.connect(path, isolation_level=None)
    raw.execute("PRAGMA busy_timeout=20")
    raw.execute(
        "INSERT INTO usage_meters (api_key_id, meter, period, used) VALUES (?, 'lookup', ?, 5)",
        (key_id, PERIOD),
    )
    try:
        yield raw, key_id
    finally:
        raw.close()


def _used(raw: sqlite3.Connection, key_id: str) -> int:
    row = raw.execute(
        "SELECT used FROM usage_meters WHERE api_key_id = ? AND meter = 'lookup'", (key_id,)
    ).fetchone()
    return int(row[0])


def _exchange(raw: sqlite3.Connection, key_id: str) -> ReserveAndRead:
    return sqlite_reserve_and_read(
        raw,
        units=1,
        api_key_id=key_id,
        period=PERIOD,
        jurisdiction="ladbs",
        permit_number="21030-20000-00256",
    )


def test_a_reservation_commits_with_its_read(connection: tuple[sqlite3.Connection, str]) -> None:
    raw, key_id = connection
    result = _exchange(raw, key_id)
    assert result.used == 6
    assert result.limit == 25_000  # the Pro plan's included credits, read with the reservation
    assert result.key_active is True
    assert result.row is None  # no cache row for this permit
    assert not raw.in_transaction
    assert _used(raw, key_id) == 6


def test_the_limit_and_an_inactive_key_reserve_nothing(
    connection: tuple[sqlite3.Connection, str],
) -> None:
    raw, key_id = connection
    raw.execute("UPDATE usage_meters SET used = 25000 WHERE api_key_id = ?", (key_id,))
    at_limit = _exchange(raw, key_id)
    assert at_limit.used is None
    assert at_limit.limit is None
    assert at_limit.key_active is True
    raw.execute("UPDATE usage_meters SET used = 5 WHERE api_key_id = ?", (key_id,))
    # the plan is read by the statement itself: a downgrade below the meter refuses at once
    raw.execute(
        "UPDATE accounts SET plan = 'free' WHERE id = "
        "(SELECT account_id FROM api_keys WHERE id = ?)",
        (key_id,),
    )
    raw.execute("UPDATE usage_meters SET used = 200 WHERE api_key_id = ?", (key_id,))
    assert _exchange(raw, key_id).used is None
    raw.execute("UPDATE usage_meters SET used = 5 WHERE api_key_id = ?", (key_id,))
    raw.execute("UPDATE api_keys SET is_active = 0 WHERE id = ?", (key_id,))
    inactive = _exchange(raw, key_id)
    assert inactive.used is None
    assert inactive.key_active is False
    assert _used(raw, key_id) == 5


def test_a_locked_database_reserves_nothing(
    connection: tuple[sqlite3.Connection, str], database: str
) -> None:
    raw, key_id = connection
    path = make_url(database.split("#")[0]).database
    assert path is not None
    holder = sqlite3.connect(path, isolation_level=None)
    try:
        holder.execute("BEGIN IMMEDIATE")
        with pytest.raises(sqlite3.OperationalError):
            _exchange(raw, key_id)
        holder.execute("ROLLBACK")
    finally:
        holder.close()
    assert _used(raw, key_id) == 5


def test_a_failed_read_takes_the_reservation_back(
    connection: tuple[sqlite3.Connection, str],
) -> None:
    raw, key_id = connection
    # A read failing after the reservation (here: the table is gone) rolls it back with it: the
    # full path then reserves from scratch, and never a second credit.
    raw.execute("ALTER TABLE permits RENAME TO permits_gone")
    with pytest.raises(sqlite3.OperationalError):
        _exchange(raw, key_id)
    assert not raw.in_transaction
    assert _used(raw, key_id) == 5
