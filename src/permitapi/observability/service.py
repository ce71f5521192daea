"""Gauges computed at scrape time from shared state."""

from __future__ import annotations

import logging

from permitapi.context import AppContext
from permitapi.observability import queue_repository
from permitapi.observability.metrics import CIRCUIT_STATE, QUEUE_DEPTH, QUEUE_OLDEST_AGE
from permitapi.sources.circuit import CircuitState

log = logging.getLogger("permitapi.metrics")
CIRCUIT_VALUES = {CircuitState.CLOSED: 0, CircuitState.HALF_OPEN: 1, CircuitState.OPEN: 2}


async def refresh_gauges(ctx: AppContext) -> None:
    """Set the queue and circuit gauges. A database failure leaves the queue gauges as they
    were (the scrape still answers: the counters matter most when the database is down)."""
    now = ctx.clock.now()
    for jurisdiction in ctx.directory.all():
        state = ctx.http.circuit(jurisdiction.slug).state
        CIRCUIT_STATE.labels(jurisdiction.slug).set(CIRCUIT_VALUES.get(state, 0))
    try:
        async with ctx.sessionmaker() as session:
            stats = [
                await queue_repository.due_operations(session, now),
                await queue_repository.due_deliveries(session, now),
            ]
    except Exception:
        log.warning("queue gauges not refreshed: the database did not answer", exc_info=True)
        return
    for stat in stats:
        QUEUE_DEPTH.labels(stat.kind).set(stat.depth)
        age = (now - stat.oldest_due_at).total_seconds() if stat.oldest_due_at else 0.0
        QUEUE_OLDEST_AGE.labels(stat.kind).set(max(age, 0.0))
