"""SQL for coverage observations."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import case, func, select, true
from sqlalchemy import insert as sql_insert
from sqlalchemy.ext.asyncio import AsyncSession

from permitapi.coverage.models import CoverageObservation


async def insert(
    session: AsyncSession, jurisdiction: str, fields_present: dict[str, bool], observed_at: datetime
) -> None:
    await insert_many(session, [(jurisdiction, fields_present)], observed_at)


async def insert_many(
    session: AsyncSession,
    observations: Sequence[tuple[str, dict[str, bool]]],
    observed_at: datetime,
) -> None:
    """(jurisdiction, fields_present) observations in one multi-row INSERT."""
    if not observations:
        return
    rows = [
        {"jurisdiction": j, "fields_present": present, "observed_at": observed_at}
        for j, present in observations
    ]
    await session.execute(sql_insert(CoverageObservation).values(rows))


async def since(session: AsyncSession, start: datetime) -> list[tuple[str, dict[str, bool]]]:
    """(jurisdiction, fields_present) of every observation at or after `start`."""
    result = await session.execute(
        select(CoverageObservation.jurisdiction, CoverageObservation.fields_present).where(
            CoverageObservation.observed_at >= start
        )
    )
    return [(j, dict(f)) for j, f in result.all()]


@dataclass(frozen=True, slots=True)
class WindowCounts:
    """One jurisdiction's observations in a window: totals and, per field, how many recorded
    the field at all (`sampled`) and how many found it present."""

    jurisdiction: str
    observations: int
    first_at: datetime
    last_at: datetime
    sampled: dict[str, int]
    present: dict[str, int]


async def window_counts(
    session: AsyncSession, start: datetime, end: datetime, field_names: Sequence[str]
) -> list[WindowCounts]:
    """Aggregated in the database (one grouped query), never by loading observations."""
    columns = []
    for name in field_names:
        flag = CoverageObservation.fields_present[name].as_boolean()
        columns.append(func.count(flag).label(f"s_{name}"))
        columns.append(func.sum(case((flag == true(), 1), else_=0)).label(f"p_{name}"))
    statement = (
        select(
            CoverageObservation.jurisdiction,
            func.count().label("observations"),
            func.min(CoverageObservation.observed_at).label("first_at"),
            func.max(CoverageObservation.observed_at).label("last_at"),
            *columns,
        )
        .where(CoverageObservation.observed_at >= start, CoverageObservation.observed_at <= end)
        .group_by(CoverageObservation.jurisdiction)
    )
    rows = (await session.execute(statement)).mappings().all()
    return [
        WindowCounts(
            jurisdiction=row["jurisdiction"],
            observations=int(row["observations"]),
            first_at=row["first_at"],
            last_at=row["last_at"],
            sampled={name: int(row[f"s_{name}"] or 0) for name in field_names},
            present={name: int(row[f"p_{name}"] or 0) for name in field_names},
        )
        for row in rows
    ]
