"""SQL for monthly usage meters. Every change is one atomic statement, so concurrent requests
can never spend past a limit (the conditional UPDATE is the check)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sqlalchemy import ScalarSelect, case, exists, or_, select, update
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.sql.dml import ReturningUpdate

from permitapi.account import plan_sql
from permitapi.account.models import Account, ApiKey
from permitapi.account.plans import Meter
from permitapi.db.upsert import insert_or_ignore
from permitapi.usage.models import UsageMeter


async def ensure_meter(session: AsyncSession, api_key_id: str, meter: str, period: str) -> None:
    values = {"api_key_id": api_key_id, "meter": meter, "period": period, "used": 0}
    await session.execute(insert_or_ignore(session, UsageMeter, values))


@dataclass(frozen=True, slots=True)
class Consumed:
    used: int  # the meter after the units were added
    limit: int  # the month's included units, as the account's plan says right now


def reservation(api_key_id: Any, meter: Meter, period: Any, units: Any) -> ReturningUpdate[int]:
    """Add `units` to the meter row if the key is still active and its account's plan allows
    them, RETURNING the new total (no row: not reserved). The arguments may be bind parameters:
    the fast path compiles this same statement for its raw drivers
    (permit/lookup/fast/repository.py)."""
    # Callers may hold a principal from a short in-process key cache; reading the key's
    # activity and its account's plan, add-on and overage flags in this same statement makes a
    # deactivation or a plan change by another process effective at once, at no extra round
    # trip.
    allowed = exists().where(
        ApiKey.id == api_key_id,
        ApiKey.is_active.is_(True),
        Account.id == ApiKey.account_id,
        or_(
            plan_sql.may_exceed(meter),
            UsageMeter.used + units <= plan_sql.included_units(meter),
        ),
    )
    return (
        update(UsageMeter)
        .where(
            UsageMeter.api_key_id == api_key_id,
            UsageMeter.meter == meter.value,
            UsageMeter.period == period,
            allowed,
        )
        .values(used=UsageMeter.used + units)
        .returning(UsageMeter.used)
    )


async def try_consume(
    session: AsyncSession, api_key_id: str, meter: Meter, period: str, units: int
) -> Consumed | None:
    """Add `units` if the key is still active and its account's plan allows them (within the
    included units, or past them where overage is allowed). Returns the new total with the
    current limit, or None when the limit would be passed, the key is no longer active, or the
    meter row does not exist yet."""
    result = await session.execute(reservation(api_key_id, meter, period, units))
    row = result.first()
    if row is None:
        return None
    # Not a subquery of RETURNING: SQLite renders RETURNING's columns unqualified, which makes
    # the join inside it ambiguous. This is the full path; the hot path reads both at once.
    limit = await current_limit(session, api_key_id, meter)
    return Consumed(int(row[0]), 0 if limit is None else limit)


def limit_of(api_key_id: Any, meter: Meter) -> ScalarSelect[int]:
    return (
        select(plan_sql.included_units(meter))
        .select_from(ApiKey)
        .join(Account, Account.id == ApiKey.account_id)
        .where(ApiKey.id == api_key_id)
        .scalar_subquery()
    )


async def current_limit(session: AsyncSession, api_key_id: str, meter: Meter) -> int | None:
    """The included units of a key's meter as its account's plan says now (None: no key)."""
    result = await session.execute(select(limit_of(api_key_id, meter)))
    value = result.scalar_one_or_none()
    return None if value is None else int(value)


async def give_back(
    session: AsyncSession, api_key_id: str, meter: str, period: str, units: int
) -> None:
    await session.execute(
        update(UsageMeter)
        .where(
            UsageMeter.api_key_id == api_key_id,
            UsageMeter.meter == meter,
            UsageMeter.period == period,
        )
        .values(used=case((UsageMeter.used >= units, UsageMeter.used - units), else_=0))
    )


async def used_by_meter(session: AsyncSession, api_key_id: str, period: str) -> dict[str, int]:
    rows = await session.execute(
        select(UsageMeter.meter, UsageMeter.used).where(
            UsageMeter.api_key_id == api_key_id, UsageMeter.period == period
        )
    )
    return {meter: int(used) for meter, used in rows.all()}
