"""Gauges computed at scrape time from shared state."""

from __future__ import annotations

import logging

from permitapi.context import AppContext
from permitapi.health.probes import ping_redis
from permitapi.observability import queue_repository
from permitapi.permit_created import jobs as permit_created
from permitapi.saved_search import jobs as saved_searches
from permitapi.sources.circuit import CircuitState
from permitapi.telemetry.metrics import (
    CIRCUIT_STATE,
    DEPENDENCY_UP,
    QUEUE_DEPTH,
    QUEUE_OLDEST_AGE,
)

log = logging.getLogger("permitapi.metrics")
DAILY_PASSES = (
    (saved_searches.NAME, saved_searches.PERIOD),
    (permit_created.NAME, permit_created.PERIOD),
)
CIRCUIT_VALUES = {CircuitState.CLOSED: 0, CircuitState.HALF_OPEN: 1, CircuitState.OPEN: 2}


async def refresh_gauges(ctx: AppContext) -> None:
    """Set the queue, circuit and dependency gauges. A database failure leaves the queue
    gauges as they were (the scrape still answers: the counters matter most when the database
    is down) and sets the database's dependency gauge to 0."""
    now = ctx.clock.now()
    if ctx.settings.redis_url:
        try:
            await ping_redis(ctx.settings.redis_url)
            DEPENDENCY_UP.labels("redis").set(1)
        except Exception as exc:
            log.warning("Redis did not answer the metrics scrape (%s)", type(exc).__name__)
            DEPENDENCY_UP.labels("redis").set(0)
    for jurisdiction in ctx.directory.all():
        state = (await ctx.http.circuit_state(jurisdiction.slug)).state
        CIRCUIT_STATE.labels(jurisdiction.slug).set(CIRCUIT_VALUES.get(state, 0))
    try:
        async with ctx.sessionmaker() as session:
            stats = [
                await queue_repository.due_operations(session, now),
                await queue_repository.due_deliveries(session, now),
                await queue_repository.due_watch_checks(session, now),
                *[
                    await queue_repository.due_pass(session, name, period, now)
                    for name, period in DAILY_PASSES
                ],
            ]
    except Exception:
        log.warning("queue gauges not refreshed: the database did not answer", exc_info=True)
        DEPENDENCY_UP.labels("database").set(0)
        return
    DEPENDENCY_UP.labels("database").set(1)
    for stat in stats:
        QUEUE_DEPTH.labels(stat.kind).set(stat.depth)
        age = (now - stat.oldest_due_at).total_seconds() if stat.oldest_due_at else 0.0
        QUEUE_OLDEST_AGE.labels(stat.kind).set(max(age, 0.0))
