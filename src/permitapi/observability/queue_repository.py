"""SQL for the job-queue gauges: how many jobs of each kind are due and how old the oldest is.

Each kind is a table of durable jobs with a due-time column; the queries only count and take a
minimum over the indexes those tables already have for their workers' claims.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncSession

from permitapi.db.base import stored_utc
from permitapi.permit.operation.models import Operation
from permitapi.watch.models import WatchedPermit
from permitapi.webhook.models import WebhookDelivery
from permitapi.worker.leases import is_due
from permitapi.worker.models import JobLease


@dataclass(frozen=True)
class QueueStats:
    kind: str
    depth: int
    oldest_due_at: datetime | None


async def due_operations(session: AsyncSession, now: datetime) -> QueueStats:
    row = (
        await session.execute(
            select(func.count(), func.min(Operation.next_run_at)).where(
                Operation.status.in_(("pending", "running")), Operation.next_run_at <= now
            )
        )
    ).one()
    return QueueStats("operations", int(row[0]), stored_utc(row[1]))


async def due_deliveries(session: AsyncSession, now: datetime) -> QueueStats:
    row = (
        await session.execute(
            select(func.count(), func.min(WebhookDelivery.next_attempt_at)).where(
                WebhookDelivery.status == "pending", WebhookDelivery.next_attempt_at <= now
            )
        )
    ).one()
    return QueueStats("webhook_deliveries", int(row[0]), stored_utc(row[1]))


async def due_watch_checks(session: AsyncSession, now: datetime) -> QueueStats:
    row = (
        await session.execute(
            select(func.count(), func.min(WatchedPermit.next_check_at)).where(
                WatchedPermit.next_check_at <= now
            )
        )
    ).one()
    return QueueStats("watch_checks", int(row[0]), stored_utc(row[1]))


async def due_pass(
    session: AsyncSession, name: str, period: timedelta, now: datetime
) -> QueueStats:
    """A once-a-period pass (job_leases) as a queue of one: due when it never completed or
    its last completion is a period old; due since then."""
    last = stored_utc(
        (
            await session.execute(select(JobLease.last_completed_at).where(JobLease.name == name))
        ).scalar_one_or_none()
    )
    if not is_due(last, period, now):
        return QueueStats(name, 0, None)
    return QueueStats(name, 1, None if last is None else last + period)
