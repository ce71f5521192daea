"""SQL for the canonical resource and detail reads of the permits table."""

from __future__ import annotations

from collections.abc import Collection

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from permitapi.permit.models import PermitRecord


async def get_by_id(session: AsyncSession, permit_id: str) -> PermitRecord | None:
    result = await session.execute(select(PermitRecord).where(PermitRecord.permit_id == permit_id))
    return result.scalar_one_or_none()


async def get_by_identity(
    session: AsyncSession, jurisdiction: str, permit_number: str
) -> PermitRecord | None:
    result = await session.execute(
        select(PermitRecord).where(
            PermitRecord.jurisdiction == jurisdiction,
            PermitRecord.permit_number == permit_number,
        )
    )
    return result.scalar_one_or_none()


async def with_numbers(session: AsyncSession, numbers: Collection[str]) -> list[PermitRecord]:
    """Rows holding any of these normalised numbers, in any jurisdiction."""
    if not numbers:
        return []
    result = await session.execute(
        select(PermitRecord)
        .where(PermitRecord.permit_number.in_(sorted(numbers)))
        .order_by(PermitRecord.jurisdiction)
    )
    return list(result.scalars())
