"""SQL for the domain event outbox and the per-key feed."""

from __future__ import annotations

from collections.abc import Collection
from datetime import datetime
from typing import Any

from sqlalchemy import delete, func, insert, select
from sqlalchemy.ext.asyncio import AsyncSession

from permitapi.event.models import DomainEvent, FeedEntry


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
) -> int:
    """Insert one event; returns its ingestion `seq`."""
    result = await session.execute(
        insert(DomainEvent)
        .values(
            event_id=event_id,
            event_type=event_type,
            api_key_id=api_key_id,
            permit_number=permit_number,
            jurisdiction=jurisdiction,
            data=data,
            occurred_at=occurred_at,
            created_at=created_at,
        )
        .returning(DomainEvent.seq)
    )
    return int(result.scalar_one())


async def insert_feed_entries(
    session: AsyncSession, event_seq: int, api_key_ids: Collection[str], created_at: datetime
) -> None:
    if not api_key_ids:
        return
    await session.execute(
        insert(FeedEntry),
        [
            {"api_key_id": key_id, "event_seq": event_seq, "created_at": created_at}
            for key_id in sorted(set(api_key_ids))
        ],
    )


async def of_type(session: AsyncSession, event_type: str) -> list[DomainEvent]:
    result = await session.execute(
        select(DomainEvent).where(DomainEvent.event_type == event_type).order_by(DomainEvent.seq)
    )
    return list(result.scalars())


async def purge_before(session: AsyncSession, cutoff: datetime) -> int:
    """Feed entries and events appended before `cutoff`; returns how many events went."""
    await session.execute(delete(FeedEntry).where(FeedEntry.created_at < cutoff))
    result = await session.execute(delete(DomainEvent).where(DomainEvent.created_at < cutoff))
    return int(result.rowcount or 0)  # type: ignore[attr-defined]


async def feed_page(
    session: AsyncSession, api_key_id: str, *, after_seq: int, not_before: datetime, limit: int
) -> list[DomainEvent]:
    """The key's events after `after_seq` in ingestion order: a keyset walk of the
    (api_key_id, event_seq) primary key, so a page's cost does not grow with the tables."""
    result = await session.execute(
        select(DomainEvent)
        .join(FeedEntry, FeedEntry.event_seq == DomainEvent.seq)
        .where(
            FeedEntry.api_key_id == api_key_id,
            FeedEntry.event_seq > after_seq,
            FeedEntry.created_at >= not_before,
        )
        .order_by(FeedEntry.event_seq)
        .limit(limit)
    )
    return list(result.scalars())


async def last_seq(session: AsyncSession) -> int:
    result = await session.execute(select(func.max(DomainEvent.seq)))
    return int(result.scalar_one() or 0)


async def count_after(session: AsyncSession, seq: int) -> int:
    result = await session.execute(select(func.count()).where(DomainEvent.seq > seq))
    return int(result.scalar_one())
