"""Creating accounts directly through the service, as the CLI does."""

from __future__ import annotations

from typing import Any

from permitapi.account import repository as account_repository
from permitapi.account import service as accounts
from permitapi.account.plans import PlanName
from permitapi.context import AppContext


async def make_account(
    ctx: AppContext,
    plan: str = "free",
    *,
    discovery_addon: bool = False,
    overage: bool = False,
) -> accounts.CreatedAccount:
    async with ctx.transaction() as session:
        return await accounts.create_account(
            session,
            plan=PlanName(plan),
            discovery_addon=discovery_addon,
            overage_enabled=overage,
            now=ctx.clock.now(),
        )


async def set_custom_limit(ctx: AppContext, account_id: str, **flags: Any) -> None:
    async with ctx.transaction() as session:
        await account_repository.set_flags(session, account_id, **flags)
