"""The `retention` job source on the purge skeleton (worker/purge.py): what is older than
EVENTS_RETENTION goes, what is younger stays, and the pass runs at most once per interval."""

from __future__ import annotations

from datetime import datetime, timedelta

from sqlalchemy import select

from permitapi.account.plans import EVENTS_RETENTION
from permitapi.context import AppContext
from permitapi.event import service as events
from permitapi.event.models import DomainEvent
from permitapi.kit.clock import FrozenClock
from permitapi.webhook.jobs import MonitoringRetention


async def _event_at(ctx: AppContext, at: datetime) -> str:
    async with ctx.transaction() as session:
        return await events.emit(
            session, events.STATUS_CHANGE, data={}, occurred_at=at, recipients=[]
        )


async def _exists(ctx: AppContext, event_id: str) -> bool:
    async with ctx.sessionmaker() as session:
        found = await session.execute(
            select(DomainEvent.event_id).where(DomainEvent.event_id == event_id)
        )
        return found.first() is not None


async def test_retention_purges_old_events_once_per_interval(
    ctx: AppContext, clock: FrozenClock
) -> None:
    now = clock.now()
    old = await _event_at(ctx, now - EVENTS_RETENTION - timedelta(minutes=1))
    recent = await _event_at(ctx, now - EVENTS_RETENTION + timedelta(hours=1))
    retention = MonitoringRetention()

    assert await retention.run_due(ctx) >= 1
    assert not await _exists(ctx, old)
    assert await _exists(ctx, recent)

    # Within the interval the pass does not run, even with something to purge.
    older = await _event_at(ctx, now - EVENTS_RETENTION - timedelta(days=1))
    clock.advance(retention.interval - timedelta(seconds=1))
    assert await retention.run_due(ctx) == 0
    assert await _exists(ctx, older)

    clock.advance(timedelta(seconds=1))
    assert await retention.run_due(ctx) >= 1
    assert not await _exists(ctx, older)
    assert await _exists(ctx, recent)
