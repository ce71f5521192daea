"""A key deactivated by another process (the CLI) stops working at once on the cached-key
lookup paths: the meter reservation re-checks the key in the same statement."""

from __future__ import annotations

import httpx

from permitapi.account import repository as account_repository
from permitapi.account.service import hash_key
from permitapi.context import AppContext
from permitapi.usage import repository as usage_repository
from tests.permit.helpers import used
from tests.support.accounts import make_account
from tests.support.fake_portal import FakePortal, snapshot

LADBS = "21030-20000-00256"


async def deactivate_elsewhere(ctx: AppContext, raw_key: str) -> None:
    """What `permitapi keys deactivate` does in its own process: no cache here is told."""
    async with ctx.transaction() as session:
        assert await account_repository.deactivate_key(session, hash_key(raw_key), ctx.clock.now())


async def test_cached_lookup_refuses_a_key_deactivated_elsewhere(
    client: httpx.AsyncClient, ctx: AppContext, portal: FakePortal
) -> None:
    portal.add(snapshot("ladbs", LADBS))
    key = (await make_account(ctx, "developer")).live_key
    headers = {"X-API-Key": key}
    assert (await client.get(f"/api/v1/permits/{LADBS}/status", headers=headers)).status_code == 200
    assert await used(ctx, key) == 1
    await deactivate_elsewhere(ctx, key)

    refused = await client.get(f"/api/v1/permits/{LADBS}/status", headers=headers)
    assert refused.status_code == 401
    assert refused.json()["code"] == "invalid_api_key"
    # Nothing was reserved for the refused call, and the key stays refused.
    async with ctx.sessionmaker() as session:
        meters = await usage_repository.used_by_meter(
            session, await account_key_id(ctx, key), "2026-11"
        )
    assert meters["lookup"] == 1
    again = await client.get(f"/api/v1/permits/{LADBS}/status", headers=headers)
    assert again.status_code == 401


async def test_batch_refuses_a_key_deactivated_elsewhere(
    client: httpx.AsyncClient, ctx: AppContext, portal: FakePortal
) -> None:
    portal.add(snapshot("ladbs", LADBS))
    key = (await make_account(ctx, "developer")).live_key
    headers = {"X-API-Key": key}
    body = {"permit_numbers": [LADBS]}
    first = await client.post("/api/v1/permits/batch-status", json=body, headers=headers)
    assert first.status_code == 200, first.text
    await deactivate_elsewhere(ctx, key)
    refused = await client.post("/api/v1/permits/batch-status", json=body, headers=headers)
    assert refused.status_code == 401
    assert refused.json()["code"] == "invalid_api_key"


async def account_key_id(ctx: AppContext, raw_key: str) -> str:
    async with ctx.sessionmaker() as session:
        record = await account_repository.find_key(session, hash_key(raw_key))
    assert record is not None
    return record.api_key_id
