"""The plans' monthly limits as SQL expressions over an `accounts` row, generated from plans.py.

A credit reservation reads the account's plan, add-on, overage flag and contract figure in the
same statement that reserves, so a plan change (or an add-on or overage switch) decides the very
next reservation in every process, whatever a process's key cache still holds. The expressions
enumerate every (plan, add-on, overage) combination and ask `monthly_limit` and
`overage_allowed` for each: plans.py stays the one place the numbers and rules live.
"""

from __future__ import annotations

from sqlalchemy import ColumnElement, and_, case, false, func, literal, or_

from permitapi.account.models import Account
from permitapi.account.plans import (
    ENTERPRISE_DEFAULT_LOOKUP_CREDITS,
    PLANS,
    Meter,
    Plan,
    monthly_limit,
    overage_allowed,
)

_FLAGS = (False, True)


def _is(
    plan: Plan, *, addon: bool | None = None, overage: bool | None = None
) -> ColumnElement[bool]:
    conditions: list[ColumnElement[bool]] = [Account.plan == plan.name.value]
    if addon is not None:
        conditions.append(Account.discovery_addon.is_(addon))
    if overage is not None:
        conditions.append(Account.overage_enabled.is_(overage))
    return and_(*conditions)


def included_units(meter: Meter) -> ColumnElement[int]:
    """The month's included units of `meter` (what X-RateLimit-Limit shows); 0 for a plan this
    code does not know, so an unknown plan can reserve nothing."""
    whens: list[tuple[ColumnElement[bool], ColumnElement[int]]] = []
    for plan in PLANS.values():
        if meter is Meter.LOOKUP and plan.monthly_lookup_credits is None:
            # monthly_limit: `custom_lookup_limit or default` (a recorded 0 means "not set")
            contract = func.coalesce(
                func.nullif(Account.custom_lookup_limit, 0), ENTERPRISE_DEFAULT_LOOKUP_CREDITS
            )
            whens.append((_is(plan), contract))
            continue
        by_addon = {
            addon: monthly_limit(plan, meter, discovery_addon=addon, custom_lookup_limit=None)
            for addon in _FLAGS
        }
        if by_addon[False] == by_addon[True]:
            whens.append((_is(plan), literal(by_addon[False])))
        else:
            whens.extend((_is(plan, addon=a), literal(units)) for a, units in by_addon.items())
    return case(*whens, else_=literal(0))


def may_exceed(meter: Meter) -> ColumnElement[bool]:
    """Whether usage may pass the included units (overage accrues)."""
    allowed: list[ColumnElement[bool]] = []
    for plan in PLANS.values():
        for overage in _FLAGS:
            addons = [
                addon
                for addon in _FLAGS
                if overage_allowed(plan, meter, overage_enabled=overage, discovery_addon=addon)
            ]
            if len(addons) == len(_FLAGS):
                allowed.append(_is(plan, overage=overage))
            else:
                allowed.extend(_is(plan, addon=addon, overage=overage) for addon in addons)
    return or_(*allowed) if allowed else false()
