"""A plan change made by another process (the CLI's `accounts set-plan`) decides the very next
reservation, although this app still holds the key in its key cache: the reserving statement
reads the account's plan, add-on and overage flags itself (account/plan_sql.py)."""

from __future__ import annotations

from itertools import product

import httpx
import pytest
from sqlalchemy import select, update

from permitapi.account import plan_sql
from permitapi.account import repository as account_repository
from permitapi.account.models import Account
from permitapi.account.plans import PLANS, Meter, PlanName, monthly_limit, overage_allowed
from permitapi.context import AppContext
from permitapi.usage import repository as usage_repository
from permitapi.usage.models import UsageMeter
from tests.permit.helpers import used
from tests.permit.lookup.test_key_deactivation import account_key_id
from tests.support.accounts import make_account
from tests.support.fake_portal import FakePortal, snapshot

LADBS = "21030-20000-00256"
STATUS = f"/api/v1/permits/{LADBS}/status"
PERIOD = "2026-11"  # the test clock's month


async def set_used(ctx: AppContext, raw_key: str, meter: Meter, value: int) -> None:
    key_id = await account_key_id(ctx, raw_key)
    async with ctx.transaction() as session:
        await usage_repository.ensure_meter(session, key_id, meter.value, PERIOD)
        await session.execute(
            update(UsageMeter)
            .where(UsageMeter.api_key_id == key_id, UsageMeter.meter == meter.value)
            .values(used=value)
        )


async def elsewhere(
    ctx: AppContext, account_id: str, plan: str | None = None, **flags: bool
) -> None:
    """What the CLI does in its own process: no key cache of this app is told."""
    async with ctx.transaction() as session:
        if plan is not None:
            assert await account_repository.set_plan(session, account_id, plan)
        assert await account_repository.set_flags(session, account_id, **flags)


async def test_a_downgraded_account_is_refused_its_201st_credit_on_the_cached_path(
    client: httpx.AsyncClient, ctx: AppContext, portal: FakePortal
) -> None:
    portal.add(snapshot("ladbs", LADBS))
    account = await make_account(ctx, "enterprise")
    headers = {"X-API-Key": account.live_key}
    await set_used(ctx, account.live_key, Meter.LOOKUP, 198)
    first = await client.get(STATUS, headers=headers)  # caches the key as enterprise
    assert first.status_code == 200, first.text
    assert first.headers["x-ratelimit-limit"] == "100000"

    await elsewhere(ctx, account.account_id, "free")
    cached_hit = await client.get(STATUS, headers=headers)  # the 200th credit: still allowed
    assert cached_hit.status_code == 200, cached_hit.text
    assert cached_hit.headers["x-ratelimit-limit"] == "200"
    assert cached_hit.headers["x-ratelimit-remaining"] == "0"
    refused = await client.get(STATUS, headers=headers)
    assert refused.status_code == 429, refused.text
    assert refused.json()["code"] == "rate_limit_exceeded"
    assert refused.json()["limit"] == 200
    assert await used(ctx, account.live_key) == 200


async def test_a_downgraded_account_is_refused_on_batch_and_detail_reads(
    client: httpx.AsyncClient, ctx: AppContext, portal: FakePortal
) -> None:
    portal.add(snapshot("ladbs", LADBS))
    account = await make_account(ctx, "pro")
    headers = {"X-API-Key": account.live_key}
    assert (await client.get(STATUS, headers=headers)).status_code == 200
    await set_used(ctx, account.live_key, Meter.LOOKUP, 200)
    await elsewhere(ctx, account.account_id, "free")

    batch = await client.post(
        "/api/v1/permits/batch-status", json={"permit_numbers": [LADBS]}, headers=headers
    )
    assert batch.status_code == 429, batch.text
    assert batch.json()["code"] == "rate_limit_exceeded"
    inspections = await client.get(f"/api/v1/permits/{LADBS}/inspections", headers=headers)
    assert inspections.status_code == 429, inspections.text
    assert await used(ctx, account.live_key) == 200


async def test_an_upgrade_takes_effect_at_once(
    client: httpx.AsyncClient, ctx: AppContext, portal: FakePortal
) -> None:
    portal.add(snapshot("ladbs", LADBS))
    account = await make_account(ctx, "free")
    headers = {"X-API-Key": account.live_key}
    await set_used(ctx, account.live_key, Meter.LOOKUP, 199)
    assert (await client.get(STATUS, headers=headers)).status_code == 200
    assert (await client.get(STATUS, headers=headers)).status_code == 429

    # (the third call of the minute: the cached key's burst window is still the free plan's)
    await elsewhere(ctx, account.account_id, "developer")
    upgraded = await client.get(STATUS, headers=headers)
    assert upgraded.status_code == 200, upgraded.text
    assert upgraded.headers["x-ratelimit-limit"] == "5000"
    assert await used(ctx, account.live_key) == 201


async def test_overage_switches_take_effect_at_once(
    client: httpx.AsyncClient, ctx: AppContext, portal: FakePortal
) -> None:
    portal.add(snapshot("ladbs", LADBS))
    account = await make_account(ctx, "developer")
    headers = {"X-API-Key": account.live_key}
    assert (await client.get(STATUS, headers=headers)).status_code == 200
    await set_used(ctx, account.live_key, Meter.LOOKUP, 5000)
    assert (await client.get(STATUS, headers=headers)).status_code == 429
    await elsewhere(ctx, account.account_id, overage_enabled=True)
    overage = await client.get(STATUS, headers=headers)
    assert overage.status_code == 200, overage.text
    assert overage.headers["x-ratelimit-remaining"] == "0"
    await elsewhere(ctx, account.account_id, overage_enabled=False)
    assert (await client.get(STATUS, headers=headers)).status_code == 429
    assert await used(ctx, account.live_key) == 5001


async def test_removing_the_discovery_addon_stops_searches_past_the_free_allowance(
    client: httpx.AsyncClient, ctx: AppContext
) -> None:
    account = await make_account(ctx, "pro", discovery_addon=True)
    headers = {"X-API-Key": account.live_key}
    await set_used(ctx, account.live_key, Meter.DISCOVERY, 5)
    await elsewhere(ctx, account.account_id, discovery_addon=False)
    refused = await client.get("/api/v1/permits/search", params={"zip": "90012"}, headers=headers)
    assert refused.status_code == 429, refused.text
    assert refused.json()["code"] == "rate_limit_exceeded"
    assert refused.json()["limit"] == 5


@pytest.mark.parametrize("meter", list(Meter))
async def test_the_sql_limits_equal_the_plans_table(ctx: AppContext, meter: Meter) -> None:
    """Every (plan, add-on, overage, contract figure) the accounts table can hold: the SQL
    expressions answer what plans.py answers."""
    account = await make_account(ctx, "free")
    checked = 0
    for name, addon, overage, custom in product(
        PlanName, (False, True), (False, True), (None, 0, 7)
    ):
        async with ctx.transaction() as session:
            await session.execute(
                update(Account)
                .where(Account.id == account.account_id)
                .values(
                    plan=name.value,
                    discovery_addon=addon,
                    overage_enabled=overage,
                    custom_lookup_limit=custom,
                )
            )
            row = (
                await session.execute(
                    select(plan_sql.included_units(meter), plan_sql.may_exceed(meter)).where(
                        Account.id == account.account_id
                    )
                )
            ).one()
        plan = PLANS[name]
        expected_limit = monthly_limit(
            plan, meter, discovery_addon=addon, custom_lookup_limit=custom
        )
        expected_exceed = overage_allowed(
            plan, meter, overage_enabled=overage, discovery_addon=addon
        )
        assert (int(row[0]), bool(row[1])) == (expected_limit, expected_exceed), (
            name,
            addon,
            overage,
            custom,
        )
        checked += 1
    assert checked == len(PlanName) * 12
