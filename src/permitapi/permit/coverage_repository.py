"""SQL for coverage observations."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from permitapi.permit.models import CoverageObservation


async def insert(
    session: AsyncSession, jurisdiction: str, fields_present: dict[str, bool], observed_at: datetime
) -> None:
    session.add(
        CoverageObservation(
            jurisdiction=jurisdiction, fields_present=fields_present, observed_at=observed_at
        )
    )
    await session.flush()


async def since(session: AsyncSession, start: datetime) -> list[tuple[str, dict[str, bool]]]:
    """(jurisdiction, fields_present) of every observation at or after `start`."""
    result = await session.execute(
        select(CoverageObservation.jurisdiction, CoverageObservation.fields_present).where(
            CoverageObservation.observed_at >= start
        )
    )
    return [(j, dict(f)) for j, f in result.all()]
