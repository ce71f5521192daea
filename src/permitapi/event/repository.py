"""SQL for the domain event outbox."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import insert, select
from sqlalchemy.ext.asyncio import AsyncSession

from permitapi.event.models import DomainEvent


async def insert_event(
    session: AsyncSession,
    *,
    event_id: str,
    event_type: str,
    api_key_id: str | None,
    permit_number: str | None,
    jurisdiction: str | None,
    data: dict[str, Any],
    occurred_at: datetime,
    created_at: datetime,
) -> None:
    await session.execute(
        insert(DomainEvent).values(
            event_id=event_id,
            event_type=event_type,
            api_key_id=api_key_id,
            permit_number=permit_number,
            jurisdiction=jurisdiction,
            data=data,
            occurred_at=occurred_at,
            created_at=created_at,
        )
    )


async def of_type(session: AsyncSession, event_type: str) -> list[DomainEvent]:
    result = await session.execute(
        select(DomainEvent).where(DomainEvent.event_type == event_type).order_by(DomainEvent.seq)
    )
    return list(result.scalars())
