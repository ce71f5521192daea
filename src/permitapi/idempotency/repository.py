"""SQL for stored idempotent responses. The UNIQUE (scope, idempotency_key) constraint is what
makes concurrent duplicates safe: the insert of the `processing` row decides the race."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import delete, select, update
from sqlalchemy.ext.asyncio import AsyncSession

from permitapi.db.upsert import insert_or_ignore
from permitapi.idempotency.models import IdempotentRequest

PROCESSING = "processing"
COMPLETED = "completed"


@dataclass(frozen=True, slots=True)
class StoredRow:
    id: int
    request_fingerprint: str
    state: str
    response_status: int | None
    response_headers: str | None
    response_body: bytes | None
    locked_until: datetime
    expires_at: datetime


async def insert_processing(
    session: AsyncSession,
    *,
    scope: str,
    idempotency_key: str,
    fingerprint: str,
    lock_token: str,
    now: datetime,
    locked_until: datetime,
) -> int | None:
    """Insert the `processing` row; its id, or None when (scope, key) already has a row."""
    statement = insert_or_ignore(
        session,
        IdempotentRequest,
        {
            "scope": scope,
            "idempotency_key": idempotency_key,
            "request_fingerprint": fingerprint,
            "state": PROCESSING,
            "lock_token": lock_token,
            "created_at": now,
            "locked_until": locked_until,
            # A processing row lapses with its lock, so a crashed request cannot block the key.
            "expires_at": locked_until,
        },
    ).returning(IdempotentRequest.id)
    row = (await session.execute(statement)).first()
    return None if row is None else int(row[0])


async def find(session: AsyncSession, scope: str, idempotency_key: str) -> StoredRow | None:
    row = (
        await session.execute(
            select(
                IdempotentRequest.id,
                IdempotentRequest.request_fingerprint,
                IdempotentRequest.state,
                IdempotentRequest.response_status,
                IdempotentRequest.response_headers,
                IdempotentRequest.response_body,
                IdempotentRequest.locked_until,
                IdempotentRequest.expires_at,
            ).where(
                IdempotentRequest.scope == scope,
                IdempotentRequest.idempotency_key == idempotency_key,
            )
        )
    ).one_or_none()
    return None if row is None else StoredRow(*row)


async def take_over_expired(
    session: AsyncSession,
    row_id: int,
    *,
    fingerprint: str,
    lock_token: str,
    now: datetime,
    locked_until: datetime,
) -> bool:
    """Turn an expired row (stale response or lapsed lock) into a fresh `processing` claim.

    The `expires_at <= now` condition is re-checked by the UPDATE itself, so of two requests
    taking over the same row only one succeeds."""
    result = await session.execute(
        update(IdempotentRequest)
        .where(IdempotentRequest.id == row_id, IdempotentRequest.expires_at <= now)
        .values(
            request_fingerprint=fingerprint,
            state=PROCESSING,
            lock_token=lock_token,
            response_status=None,
            response_headers=None,
            response_body=None,
            created_at=now,
            locked_until=locked_until,
            expires_at=locked_until,
        )
    )
    return bool(result.rowcount)  # type: ignore[attr-defined]


async def complete(
    session: AsyncSession,
    row_id: int,
    lock_token: str,
    *,
    status: int,
    headers: str,
    body: bytes,
    expires_at: datetime,
) -> bool:
    result = await session.execute(
        update(IdempotentRequest)
        .where(
            IdempotentRequest.id == row_id,
            IdempotentRequest.lock_token == lock_token,
            IdempotentRequest.state == PROCESSING,
        )
        .values(
            state=COMPLETED,
            response_status=status,
            response_headers=headers,
            response_body=body,
            expires_at=expires_at,
        )
    )
    return bool(result.rowcount)  # type: ignore[attr-defined]


async def delete_claim(session: AsyncSession, row_id: int, lock_token: str) -> None:
    await session.execute(
        delete(IdempotentRequest).where(
            IdempotentRequest.id == row_id, IdempotentRequest.lock_token == lock_token
        )
    )


async def purge_expired(session: AsyncSession, now: datetime) -> int:
    result = await session.execute(
        delete(IdempotentRequest).where(IdempotentRequest.expires_at <= now)
    )
    return int(result.rowcount)  # type: ignore[attr-defined]
