"""SQL for monthly usage meters. Every change is one atomic statement, so concurrent requests
can never spend past a limit (the conditional UPDATE is the check)."""

from __future__ import annotations

from sqlalchemy import and_, case, exists, select, update
from sqlalchemy.ext.asyncio import AsyncSession

from permitapi.account.models import ApiKey
from permitapi.db.upsert import insert_or_ignore
from permitapi.usage.models import UsageMeter


async def ensure_meter(session: AsyncSession, api_key_id: str, meter: str, period: str) -> None:
    values = {"api_key_id": api_key_id, "meter": meter, "period": period, "used": 0}
    await session.execute(insert_or_ignore(session, UsageMeter, values))


async def try_consume(
    session: AsyncSession,
    api_key_id: str,
    meter: str,
    period: str,
    units: int,
    limit: int | None,
) -> int | None:
    """Add `units` if the result stays within `limit` (None: no ceiling) and the key is still
    active. Returns the new total, or None when the limit would be passed, the key is no longer
    active, or the meter row does not exist yet."""
    # Callers may hold a principal from a short in-process key cache; checking activity in the
    # same statement makes a deactivation by another process effective at once, at no extra
    # round trip.
    key_active = exists().where(ApiKey.id == api_key_id, ApiKey.is_active.is_(True))
    condition = and_(
        UsageMeter.api_key_id == api_key_id,
        UsageMeter.meter == meter,
        UsageMeter.period == period,
        key_active,
    )
    if limit is not None:
        condition = and_(condition, UsageMeter.used + units <= limit)
    result = await session.execute(
        update(UsageMeter)
        .where(condition)
        .values(used=UsageMeter.used + units)
        .returning(UsageMeter.used)
    )
    row = result.first()
    return None if row is None else int(row[0])


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


async def key_is_active(session: AsyncSession, api_key_id: str) -> bool:
    result = await session.execute(select(ApiKey.is_active).where(ApiKey.id == api_key_id))
    return bool(result.scalar_one_or_none())
