"""SQL for operations: creation, owner-scoped reads, lease claims and completion."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import and_, or_, select, update
from sqlalchemy.ext.asyncio import AsyncSession

from permitapi.permit.operation.models import Operation


async def insert(session: AsyncSession, operation: Operation) -> None:
    session.add(operation)
    await session.flush()


async def get_owned(session: AsyncSession, operation_id: str, api_key_id: str) -> Operation | None:
    result = await session.execute(
        select(Operation).where(
            Operation.operation_id == operation_id, Operation.api_key_id == api_key_id
        )
    )
    return result.scalar_one_or_none()


async def get(session: AsyncSession, operation_id: str) -> Operation | None:
    result = await session.execute(select(Operation).where(Operation.operation_id == operation_id))
    return result.scalar_one_or_none()


def _due(now: datetime) -> Any:
    return or_(
        and_(Operation.status == "pending", Operation.next_run_at <= now),
        and_(Operation.status == "running", Operation.lease_expires_at < now),
    )


async def claim_due(
    session: AsyncSession, owner: str, now: datetime, until: datetime, limit: int
) -> list[str]:
    """Lease up to `limit` due operations (pending, or running with an expired lease) to
    `owner`, moving them to running. PostgreSQL skips rows other workers have locked;
    SQLite (one writer at a time) relies on the conditional UPDATE alone."""
    query = select(Operation.operation_id).where(_due(now)).order_by(Operation.created_at)
    if session.get_bind().dialect.name == "postgresql":
        query = query.with_for_update(skip_locked=True)
    candidates = list((await session.execute(query.limit(limit))).scalars())
    claimed: list[str] = []
    for operation_id in candidates:
        result = await session.execute(
            update(Operation)
            .where(Operation.operation_id == operation_id, _due(now))
            .values(
                status="running",
                lease_owner=owner,
                lease_expires_at=until,
                attempts=Operation.attempts + 1,
            )
        )
        if result.rowcount:  # type: ignore[attr-defined]
            claimed.append(operation_id)
    if claimed:
        await session.execute(
            update(Operation)
            .where(Operation.operation_id.in_(claimed), Operation.started_at.is_(None))
            .values(started_at=now)
        )
    return claimed


async def complete(
    session: AsyncSession,
    operation_id: str,
    owner: str,
    *,
    status: str,
    result: dict[str, Any] | None,
    error: dict[str, Any] | None,
    completed_at: datetime,
) -> bool:
    """Finish an operation this owner still holds; False when the lease was lost (another
    worker took over), so the completion and its event happen exactly once."""
    outcome = await session.execute(
        update(Operation)
        .where(
            Operation.operation_id == operation_id,
            Operation.status == "running",
            Operation.lease_owner == owner,
        )
        .values(
            status=status,
            result=result,
            error=error,
            completed_at=completed_at,
            lease_owner=None,
            lease_expires_at=None,
        )
    )
    return bool(outcome.rowcount)  # type: ignore[attr-defined]
