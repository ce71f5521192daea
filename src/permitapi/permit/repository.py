"""SQL for the permits table (latest representation per permit identity)."""

from __future__ import annotations

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from permitapi.permit.models import PermitRecord


async def get_by_id(session: AsyncSession, permit_id: str) -> PermitRecord | None:
    return await session.get(PermitRecord, permit_id)


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


async def jurisdictions_holding(session: AsyncSession, permit_number: str) -> list[str]:
    """Jurisdictions where this normalised number was looked up before (rule 7 of status)."""
    result = await session.execute(
        select(PermitRecord.jurisdiction)
        .where(PermitRecord.permit_number == permit_number)
        .order_by(PermitRecord.jurisdiction)
    )
    return list(result.scalars())
