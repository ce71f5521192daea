"""SQL for `job_leases`: conditional claims of named periodic passes.

The conditional UPDATE is the claim: of several workers asking at once, only one sees its
WHERE clause hold (PostgreSQL re-checks it on the row version it waited for; SQLite has one
writer), so a pass never has two holders.
"""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import or_, select, update
from sqlalchemy.ext.asyncio import AsyncSession

from permitapi.db.upsert import insert_or_ignore
from permitapi.worker.models import JobLease


async def try_acquire(
    session: AsyncSession, name: str, owner: str, now: datetime, until: datetime
) -> bool:
    """Hold the lease of `name` until `until`: true when it was free, lapsed, or already this
    owner's (then it is extended); false while another owner holds an unexpired lease."""
    await session.execute(
        insert_or_ignore(
            session,
            JobLease,
            {"name": name, "owner": None, "leased_until": None, "last_completed_at": None},
        )
    )
    result = await session.execute(
        update(JobLease)
        .where(
            JobLease.name == name,
            or_(
                JobLease.owner.is_(None),
                JobLease.leased_until.is_(None),
                JobLease.leased_until <= now,
                JobLease.owner == owner,
            ),
        )
        .values(owner=owner, leased_until=until)
        .returning(JobLease.name)
    )
    return result.first() is not None


async def complete(session: AsyncSession, name: str, owner: str, now: datetime) -> bool:
    """Record that `owner` completed the pass at `now` and free the lease; false (nothing
    written) when `owner` no longer holds it."""
    result = await session.execute(
        update(JobLease)
        .where(JobLease.name == name, JobLease.owner == owner)
        .values(owner=None, leased_until=None, last_completed_at=now)
        .returning(JobLease.name)
    )
    return result.first() is not None


async def release(session: AsyncSession, name: str, owner: str) -> None:
    """Free the lease without completing the pass (it was not due after all)."""
    await session.execute(
        update(JobLease)
        .where(JobLease.name == name, JobLease.owner == owner)
        .values(owner=None, leased_until=None)
    )


async def last_completed(session: AsyncSession, name: str) -> datetime | None:
    result = await session.execute(select(JobLease.last_completed_at).where(JobLease.name == name))
    return result.scalar_one_or_none()
