"""SQL for jurisdiction stats and analytics over the permits the service has observed."""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass
from datetime import date

from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncSession

from permitapi.permit.models import PermitRecord


@dataclass(frozen=True, slots=True)
class DateBounds:
    earliest_applied: date | None
    latest_applied: date | None
    earliest_issued: date | None
    latest_issued: date | None


async def active_counts(
    session: AsyncSession, active_statuses: Collection[str], slug: str | None = None
) -> dict[str, int]:
    """Permits per jurisdiction whose normalised status is one of `active_statuses`."""
    query = (
        select(PermitRecord.jurisdiction, func.count())
        .where(PermitRecord.normalized_status.in_(list(active_statuses)))
        .group_by(PermitRecord.jurisdiction)
    )
    if slug is not None:
        query = query.where(PermitRecord.jurisdiction == slug)
    rows = await session.execute(query)
    return {jurisdiction: int(count) for jurisdiction, count in rows.all()}


async def date_bounds(session: AsyncSession, slug: str) -> DateBounds:
    row = (
        await session.execute(
            select(
                func.min(PermitRecord.applied_date),
                func.max(PermitRecord.applied_date),
                func.min(PermitRecord.issued_date),
                func.max(PermitRecord.issued_date),
            ).where(PermitRecord.jurisdiction == slug)
        )
    ).one()
    return DateBounds(*row)


async def counts_by_type(session: AsyncSession, slug: str) -> dict[str | None, int]:
    rows = await session.execute(
        select(PermitRecord.permit_type, func.count())
        .where(PermitRecord.jurisdiction == slug)
        .group_by(PermitRecord.permit_type)
    )
    return {permit_type: int(count) for permit_type, count in rows.all()}


async def processing_intervals(session: AsyncSession, slug: str) -> list[tuple[date, date]]:
    """(applied, issued) of every permit that has both dates."""
    rows = await session.execute(
        select(PermitRecord.applied_date, PermitRecord.issued_date).where(
            PermitRecord.jurisdiction == slug,
            PermitRecord.applied_date.is_not(None),
            PermitRecord.issued_date.is_not(None),
        )
    )
    return [(applied, issued) for applied, issued in rows.all() if applied and issued]
