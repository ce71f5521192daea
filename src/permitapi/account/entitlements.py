"""Rules every monitoring resource shares: live keys only, and a plan cap on active items.

Webhooks, watches and saved searches (and the events feed, for the first rule) each used to
carry their own copy; one copy keeps their answers alike.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from sqlalchemy.ext.asyncio import AsyncSession

from permitapi.account import repository as accounts
from permitapi.account.plans import PlanName
from permitapi.account.service import Principal
from permitapi.errors import BadRequest, Forbidden


def require_live_key(principal: Principal, what: str) -> None:
    """Monitoring belongs to live keys: a sandbox key never observes a permit, so it has
    nothing to announce or watch."""
    if principal.is_sandbox:
        raise Forbidden(
            f"{what} need a live key; sandbox keys have no monitoring.",
            code="sandbox_not_supported",
        )


@dataclass(frozen=True, slots=True)
class PlanCap:
    """How one capped resource is refused: `code`, what the plan allows (e.g. "active
    watch(es)"), and the hint for plans that can upgrade and for enterprise."""

    code: str
    allows: str
    upgrade_hint: str
    enterprise_hint: str


async def ensure_below_cap(
    session: AsyncSession,
    principal: Principal,
    cap: int,
    rule: PlanCap,
    count_active: Callable[[], Awaitable[int]],
) -> None:
    """400 `rule.code` (with `plan_limit` and `upgrade_hint`) when the key already has `cap`
    active items. Counted under the key's row lock so that concurrent creations cannot both
    take the last slot."""
    await accounts.lock_key(session, principal.api_key_id)
    if await count_active() >= cap:
        hint = (
            rule.upgrade_hint
            if principal.plan.name is not PlanName.ENTERPRISE
            else rule.enterprise_hint
        )
        raise BadRequest(
            f"The {principal.plan.name.value} plan allows {cap} {rule.allows}.",
            code=rule.code,
            extra={"plan_limit": cap, "upgrade_hint": hint},
        )
