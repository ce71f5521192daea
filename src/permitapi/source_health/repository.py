"""SQL for source health: append fetch outcomes, aggregate them per source."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import and_, case, func, insert, select
from sqlalchemy.ext.asyncio import AsyncSession

from permitapi.db.base import stored_utc
from permitapi.source_health.models import SourceFetch

# Outcomes that say the portal answered as it should. Everything else (retry_later, blocked,
# portal_changed, error) means we could not read the portal.
HEALTHY_OUTCOMES = ("success", "not_found")
# The daily drift canary's verdicts (outcome ok | drift | unreached) are kept in the same table
# under this operation; they are shown beside the health, not counted in it (its fetches are
# recorded as ordinary fetches already).
CANARY_OPERATION = "canary"


@dataclass(frozen=True, slots=True)
class CanaryRow:
    checked_at: datetime
    outcome: str
    detail: str | None


@dataclass(frozen=True, slots=True)
class SourceAggregate:
    source: str
    window_total: int
    window_failures: int
    last_success_at: datetime | None
    last_failure_at: datetime | None
    failures_since_success: int
    last_failure_reason: str | None


async def insert_fetches(
    session: AsyncSession,
    source: str,
    operation: str,
    outcomes: Sequence[tuple[str, str | None, float | None]],
    occurred_at: datetime,
) -> None:
    """(outcome, reason, latency_ms) rows in one multi-row INSERT, ids in the given order."""
    if not outcomes:
        return
    rows = [
        {
            "source": source,
            "operation": operation,
            "outcome": outcome,
            "reason": (reason or None) and reason[:200],
            "latency_ms": latency_ms,
            "occurred_at": occurred_at,
        }
        for outcome, reason, latency_ms in outcomes
    ]
    await session.execute(insert(SourceFetch).values(rows))


async def aggregates(session: AsyncSession, window_start: datetime) -> dict[str, SourceAggregate]:
    """Per source: counts within the window, last success/failure ever, and the current streak.

    The streak is counted by row id, not time: outcomes recorded within the same clock tick
    (a frozen test clock, a coarse timer) still have a definite order.
    """
    healthy = SourceFetch.outcome.in_(HEALTHY_OUTCOMES)
    counted = SourceFetch.operation != CANARY_OPERATION
    totals = (
        select(
            SourceFetch.source,
            func.count().filter(SourceFetch.occurred_at >= window_start).label("window_total"),
            func.count()
            .filter(and_(SourceFetch.occurred_at >= window_start, ~healthy))
            .label("window_failures"),
            func.max(case((healthy, SourceFetch.occurred_at))).label("last_success_at"),
            func.max(case((~healthy, SourceFetch.occurred_at))).label("last_failure_at"),
            func.max(case((healthy, SourceFetch.id), else_=0)).label("last_success_id"),
            func.max(case((~healthy, SourceFetch.id), else_=0)).label("last_failure_id"),
        )
        .where(counted)
        .group_by(SourceFetch.source)
        .subquery()
    )
    streak = (
        select(func.count())
        .where(
            SourceFetch.source == totals.c.source,
            counted,
            ~healthy,
            SourceFetch.id > totals.c.last_success_id,
        )
        .scalar_subquery()
    )
    last_reason = (
        select(SourceFetch.reason)
        .where(SourceFetch.id == totals.c.last_failure_id)
        .scalar_subquery()
    )
    rows = await session.execute(
        select(
            totals.c.source,
            totals.c.window_total,
            totals.c.window_failures,
            totals.c.last_success_at,
            totals.c.last_failure_at,
            streak.label("failures_since_success"),
            last_reason.label("last_failure_reason"),
        )
    )
    result: dict[str, SourceAggregate] = {}
    for row in rows:
        result[row.source] = SourceAggregate(
            source=row.source,
            window_total=int(row.window_total or 0),
            window_failures=int(row.window_failures or 0),
            last_success_at=stored_utc(row.last_success_at),
            last_failure_at=stored_utc(row.last_failure_at),
            failures_since_success=int(row.failures_since_success or 0),
            last_failure_reason=row.last_failure_reason,
        )
    return result


async def latest_canaries(session: AsyncSession) -> dict[str, CanaryRow]:
    """Per source, the newest canary verdict."""
    newest = (
        select(func.max(SourceFetch.id).label("id"))
        .where(SourceFetch.operation == CANARY_OPERATION)
        .group_by(SourceFetch.source)
        .subquery()
    )
    rows = await session.execute(
        select(
            SourceFetch.source, SourceFetch.occurred_at, SourceFetch.outcome, SourceFetch.reason
        ).join(newest, SourceFetch.id == newest.c.id)
    )
    found: dict[str, CanaryRow] = {}
    for row in rows:
        checked_at = stored_utc(row.occurred_at)
        assert checked_at is not None  # occurred_at is never null
        found[row.source] = CanaryRow(checked_at, row.outcome, row.reason)
    return found
