"""The hot path's PostgreSQL connections (permit/lookup/fast/connections.py), on a real server."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterator

import asyncpg  # type: ignore[import-untyped]
import pytest
from sqlalchemy.engine.url import make_url

from permitapi.permit.lookup.fast.connections import HotConnections
from tests.support import databases


@pytest.fixture(scope="module")
def dsn() -> Iterator[str]:
    name, url = databases.create_postgres_database()
    try:
        yield make_url(url).set(drivername="postgresql").render_as_string(hide_password=False)
    finally:
        databases.drop_postgres_database(name)


@pytest.fixture
async def connections(dsn: str) -> AsyncIterator[HotConnections]:
    pool = HotConnections(f"{dsn}?application_name=hot-test", 2)
    try:
        yield pool
    finally:
        await pool.close()


async def _backends(dsn: str, application: str) -> int:
    admin = await asyncpg.connect(dsn)
    try:
        count: int = await admin.fetchval(
            "SELECT count(*) FROM pg_stat_activity "
            "WHERE datname = current_database() AND application_name = $1",
            application,
        )
        return count
    finally:
        await admin.close()


async def test_requests_are_served_in_arrival_order_and_never_exceed_the_size(
    connections: HotConnections, dsn: str
) -> None:
    served: list[int] = []
    in_use = 0
    most = 0

    async def one(index: int) -> None:
        nonlocal in_use, most
        async with connections.connection() as connection:
            served.append(index)
            in_use += 1
            most = max(most, in_use)
            await connection.fetchval("SELECT pg_sleep(0.01)")
            in_use -= 1

    await asyncio.gather(_use(connections), _use(connections))  # both connections open
    tasks = []
    for index in range(12):
        tasks.append(asyncio.ensure_future(one(index)))
        await asyncio.sleep(0)  # arrival order = index order
    await asyncio.gather(*tasks)
    assert most == 2
    assert served == list(range(12))  # admitted in arrival order
    assert await _backends(dsn, "hot-test") == 2  # reused, not reopened


async def test_a_failed_statement_does_not_hand_back_its_connection(
    connections: HotConnections,
) -> None:
    async with connections.connection() as connection:
        first = await connection.fetchval("SELECT pg_backend_pid()")

    async def divide_by_zero() -> None:
        async with connections.connection() as connection:
            assert await connection.fetchval("SELECT pg_backend_pid()") == first
            await connection.fetchval("SELECT 1/0")

    with pytest.raises(asyncpg.PostgresError):
        await divide_by_zero()
    async with connections.connection() as connection:
        assert await connection.fetchval("SELECT pg_backend_pid()") != first
        assert await connection.fetchval("SELECT 41 + 1") == 42


async def test_a_cancelled_statement_frees_its_slot(connections: HotConnections) -> None:
    async def slow() -> None:
        async with connections.connection() as connection:
            await connection.fetchval("SELECT pg_sleep(30)")

    tasks = [asyncio.ensure_future(slow()) for _ in range(2)]
    await asyncio.sleep(0.2)
    for task in tasks:
        task.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)
    async with asyncio.timeout(5):  # both slots are free again at once
        async with connections.connection() as connection:
            assert await connection.fetchval("SELECT 1") == 1


async def test_close_closes_every_connection(dsn: str) -> None:
    pool = HotConnections(f"{dsn}?application_name=hot-close", 3)
    await asyncio.gather(*(_use(pool) for _ in range(3)))
    assert await _backends(dsn, "hot-close") == 3
    await pool.close()
    for _ in range(50):
        if await _backends(dsn, "hot-close") == 0:
            break
        await asyncio.sleep(0.05)
    assert await _backends(dsn, "hot-close") == 0


async def _use(pool: HotConnections) -> None:
    async with pool.connection() as connection:
        await connection.fetchval("SELECT pg_sleep(0.05)")
