"""An unexpected failure after the credit was reserved leaves the meter exactly where it was,
whether the hot path reserved (committed on its own, so released) or the full path did (rolled
back with its transaction, so not released a second time)."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from permitapi.context import AppContext
from permitapi.permit.lookup import service as lookup
from permitapi.permit.lookup.fast import repository as hot_repository
from permitapi.permit.lookup.fast.repository import ReserveAndRead
from tests.permit.helpers import used
from tests.support.accounts import make_account
from tests.support.fake_portal import FakePortal, snapshot

FIRST = "21030-20000-00257"
LADBS = "21030-20000-00256"


def url(number: str) -> str:
    return f"/api/v1/permits/{number}/status"


async def explode(*args: object, **kwargs: object) -> lookup.Plan:
    raise RuntimeError("injected failure after the reservation")


@pytest.fixture
async def key_with_one_lookup(
    client: httpx.AsyncClient, ctx: AppContext, portal: FakePortal
) -> str:
    portal.add(snapshot("ladbs", FIRST))
    portal.add(snapshot("ladbs", LADBS))
    key = (await make_account(ctx, "developer")).live_key
    ok = await client.get(url(FIRST), headers={"X-API-Key": key})
    assert ok.status_code == 200
    assert await used(ctx, key) == 1
    return key


async def test_hot_path_reservation_is_released(
    client: httpx.AsyncClient,
    ctx: AppContext,
    key_with_one_lookup: str,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(lookup, "plan_item", explode)
    response = await client.get(url(LADBS), headers={"X-API-Key": key_with_one_lookup})
    assert response.status_code == 500
    assert await used(ctx, key_with_one_lookup) == 1


async def test_full_path_reservation_is_not_released_twice(
    client: httpx.AsyncClient,
    ctx: AppContext,
    key_with_one_lookup: str,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # The hot statement could not reserve (on SQLite: the database was locked), so the full
    # path reserves inside the transaction that then fails and rolls back.
    def not_reserved(*args: Any, **kwargs: Any) -> ReserveAndRead:
        return ReserveAndRead(None, None, True)

    async def not_reserved_async(*args: Any, **kwargs: Any) -> ReserveAndRead:
        return not_reserved()

    monkeypatch.setattr(hot_repository, "sqlite_reserve_and_read", not_reserved)
    monkeypatch.setattr(hot_repository, "pg_reserve_and_read", not_reserved_async)
    monkeypatch.setattr(lookup, "plan_item", explode)
    response = await client.get(url(LADBS), headers={"X-API-Key": key_with_one_lookup})
    assert response.status_code == 500
    assert await used(ctx, key_with_one_lookup) == 1
