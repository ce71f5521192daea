"""SQL for requested jurisdictions and the votes of authenticated keys."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import Select, func, select, update
from sqlalchemy.ext.asyncio import AsyncSession

from permitapi.db.upsert import insert_or_ignore
from permitapi.jurisdiction.models import (
    JurisdictionRequest,
    JurisdictionRequestAddressVote,
    JurisdictionRequestVote,
)


@dataclass(frozen=True, slots=True)
class RequestAggregate:
    id: int
    jurisdiction_name: str
    state_code: str
    request_count: int
    unique_keys_count: int
    status: str


def _aggregate_query() -> Select[Any]:
    votes = (
        select(func.count(JurisdictionRequestVote.id))
        .where(JurisdictionRequestVote.request_id == JurisdictionRequest.id)
        .correlate(JurisdictionRequest)
        .scalar_subquery()
    )
    return select(
        JurisdictionRequest.id,
        JurisdictionRequest.jurisdiction_name,
        JurisdictionRequest.state_code,
        JurisdictionRequest.request_count,
        votes.label("unique_keys_count"),
        JurisdictionRequest.status,
    )


async def ensure_request(
    session: AsyncSession, *, name_key: str, display_name: str, state_code: str, now: datetime
) -> int:
    """The id of the request for (name_key, state), created with zero counts if new."""
    await session.execute(
        insert_or_ignore(
            session,
            JurisdictionRequest,
            {
                "name_key": name_key,
                "jurisdiction_name": display_name,
                "state_code": state_code,
                "request_count": 0,
                "status": "open",
                "created_at": now,
                "updated_at": now,
            },
        )
    )
    return int(
        (
            await session.execute(
                select(JurisdictionRequest.id).where(
                    JurisdictionRequest.name_key == name_key,
                    JurisdictionRequest.state_code == state_code,
                )
            )
        ).scalar_one()
    )


async def find_request(
    session: AsyncSession, *, name_key: str, state_code: str
) -> RequestAggregate | None:
    query = _aggregate_query().where(
        JurisdictionRequest.name_key == name_key, JurisdictionRequest.state_code == state_code
    )
    row = (await session.execute(query)).one_or_none()
    return None if row is None else RequestAggregate(*row)


async def get_request(session: AsyncSession, request_id: int) -> RequestAggregate:
    query = _aggregate_query().where(JurisdictionRequest.id == request_id)
    return RequestAggregate(*(await session.execute(query)).one())


async def add_vote(
    session: AsyncSession, *, request_id: int, api_key_id: str, now: datetime
) -> bool:
    """Record one key's vote; False when the key had already voted (the unique pair holds)."""
    statement = insert_or_ignore(
        session,
        JurisdictionRequestVote,
        {"request_id": request_id, "api_key_id": api_key_id, "created_at": now},
    ).returning(JurisdictionRequestVote.id)
    return (await session.execute(statement)).first() is not None


async def add_address_vote(
    session: AsyncSession, *, request_id: int, address_hash: str, now: datetime
) -> bool:
    """Record one keyless address's vote; False when that address had already voted."""
    statement = insert_or_ignore(
        session,
        JurisdictionRequestAddressVote,
        {"request_id": request_id, "address_hash": address_hash, "created_at": now},
    ).returning(JurisdictionRequestAddressVote.id)
    return (await session.execute(statement)).first() is not None


async def count_request(session: AsyncSession, request_id: int, now: datetime) -> None:
    await session.execute(
        update(JurisdictionRequest)
        .where(JurisdictionRequest.id == request_id)
        .values(request_count=JurisdictionRequest.request_count + 1, updated_at=now)
    )


async def set_status(session: AsyncSession, request_id: int, status: str, now: datetime) -> None:
    await session.execute(
        update(JurisdictionRequest)
        .where(JurisdictionRequest.id == request_id)
        .values(status=status, updated_at=now)
    )


async def list_requests(session: AsyncSession, limit: int) -> list[RequestAggregate]:
    """Most-wanted first: distinct keys, then all requests, then name."""
    aggregate = _aggregate_query().subquery()
    rows = await session.execute(
        select(aggregate)
        .order_by(
            aggregate.c.unique_keys_count.desc(),
            aggregate.c.request_count.desc(),
            aggregate.c.jurisdiction_name,
            aggregate.c.state_code,
        )
        .limit(limit)
    )
    return [RequestAggregate(*row) for row in rows.all()]
