"""Keys and meters shared by the permit tests."""

from __future__ import annotations

from dataclasses import dataclass

from permitapi.account import service as accounts
from permitapi.account.plans import Meter
from permitapi.context import AppContext
from permitapi.usage import service as usage
from tests.support.accounts import make_account


@dataclass(frozen=True, slots=True)
class Keys:
    live: dict[str, str]
    sandbox: dict[str, str]
    principal: accounts.Principal


async def keys_for(ctx: AppContext, plan: str = "pro") -> Keys:
    created = await make_account(ctx, plan)
    async with ctx.sessionmaker() as session:
        principal = await accounts.resolve_key(session, created.live_key)
    assert principal is not None
    return Keys({"X-API-Key": created.live_key}, {"X-API-Key": created.sandbox_key}, principal)


async def lookup_credits_used(ctx: AppContext, principal: accounts.Principal) -> int:
    async with ctx.sessionmaker() as session:
        state = await usage.meter_state(session, principal, Meter.LOOKUP, ctx.clock.now())
    return state.used


async def used(ctx: AppContext, raw_key: str) -> int:
    """Lookup credits used this month by the account of `raw_key`."""
    async with ctx.sessionmaker() as session:
        principal = await accounts.resolve_key(session, raw_key)
        assert principal is not None
        return (await usage.meter_state(session, principal, Meter.LOOKUP, ctx.clock.now())).used
