"""Authentication, rate-limit headers, the usage endpoint and the burst window."""

from __future__ import annotations

from datetime import UTC, datetime

import httpx

from permitapi.account import service as accounts
from permitapi.context import AppContext
from permitapi.kit.clock import FrozenClock
from tests.support.accounts import make_account
from tests.support.problems import assert_problem


async def test_missing_invalid_and_deactivated_keys_are_401(
    client: httpx.AsyncClient, ctx: AppContext
) -> None:
    assert_problem(await client.get("/api/v1/usage"), 401, "invalid_api_key")
    for bad in ("nonsense", "sk_live_" + "x" * 32, "sk_test_"):
        response = await client.get("/api/v1/usage", headers={"X-API-Key": bad})
        assert_problem(response, 401, "invalid_api_key")
    account = await make_account(ctx)
    ok = await client.get("/api/v1/usage", headers={"X-API-Key": account.live_key})
    assert ok.status_code == 200
    async with ctx.transaction() as session:
        await accounts.deactivate_key(session, account.live_key, ctx.clock.now())
    gone = await client.get("/api/v1/usage", headers={"X-API-Key": account.live_key})
    assert_problem(gone, 401, "invalid_api_key")


async def test_public_endpoint_needs_no_key(client: httpx.AsyncClient) -> None:
    response = await client.get("/api/v1/jurisdictions")
    assert response.status_code == 200
    assert "x-ratelimit-limit" not in response.headers


async def test_usage_of_a_fresh_free_key(
    client: httpx.AsyncClient, ctx: AppContext, clock: FrozenClock
) -> None:
    account = await make_account(ctx, "free")
    response = await client.get("/api/v1/usage", headers={"X-API-Key": account.live_key})
    assert response.status_code == 200
    assert response.json() == {
        "plan": "free",
        "is_sandbox": False,
        "period_start": "2026-11-01T00:00:00Z",
        "resets_at": "2026-12-01T00:00:00Z",
        "overage_enabled": False,
        "lookup": {
            "used": 0,
            "limit": 200,
            "remaining": 200,
            "percent_used": 0.0,
            "metered": True,
            "enabled": True,
        },
        "discovery": {
            "used": 0,
            "limit": 5,
            "remaining": 5,
            "percent_used": 0.0,
            "metered": True,
            "enabled": True,
        },
    }
    reset = int(datetime(2026, 12, 1, tzinfo=UTC).timestamp())
    assert response.headers["x-ratelimit-limit"] == "200"
    assert response.headers["x-ratelimit-remaining"] == "200"
    assert response.headers["x-ratelimit-reset"] == str(reset)


async def test_sandbox_usage_is_unmetered(client: httpx.AsyncClient, ctx: AppContext) -> None:
    account = await make_account(ctx, "pro", discovery_addon=True)
    response = await client.get("/api/v1/usage", headers={"X-API-Key": account.sandbox_key})
    body = response.json()
    assert body["is_sandbox"] is True
    assert body["lookup"]["limit"] is None
    assert body["lookup"]["metered"] is False
    assert response.headers["x-sandbox-mode"] == "true"
    assert "x-ratelimit-limit" not in response.headers


async def test_pro_with_addon_limits(client: httpx.AsyncClient, ctx: AppContext) -> None:
    account = await make_account(ctx, "pro", discovery_addon=True, overage=True)
    body = (await client.get("/api/v1/usage", headers={"X-API-Key": account.live_key})).json()
    assert body["plan"] == "pro"
    assert body["overage_enabled"] is True
    assert body["lookup"]["limit"] == 25_000
    assert body["discovery"]["limit"] == 1_500


async def test_usage_is_not_burst_limited(client: httpx.AsyncClient, ctx: AppContext) -> None:
    account = await make_account(ctx, "free")
    for _ in range(6):
        response = await client.get("/api/v1/usage", headers={"X-API-Key": account.live_key})
        assert response.status_code == 200
