"""Composition: the one module that knows which domains react to which, and what the worker
runs. `app.py` and `cli.py` use it; nothing below imports it.

Arrows between packages point down only (design.md, "Layers"), so where a lower domain's work
must reach a higher one, the higher one is registered here as a subscriber or an observer:

- every event `event.emit` records is fanned out to webhook deliveries
  (`webhook.fanout.enqueue_deliveries`), in the recording transaction;
- every permit representation `permit.refresh` stores is shown to the watches
  (`watch.observation.observe_store`), which emit the events the change stands for.
"""

from __future__ import annotations

from contextlib import AbstractAsyncContextManager

from permitapi.config import Settings
from permitapi.context import AppContext
from permitapi.db.engine import create_engine, create_sessionmaker
from permitapi.event import service as events
from permitapi.idempotency.jobs import IdempotencyPurge
from permitapi.kit.burst import BurstLimiter
from permitapi.kit.clock import Clock, SystemClock
from permitapi.permit import observers
from permitapi.permit.lookup.jobs import OperationJobs
from permitapi.permit_created.jobs import PermitCreatedMonitor
from permitapi.saved_search.jobs import SavedSearchEvaluations
from permitapi.source_health.jobs import CanaryPass
from permitapi.source_health.recorder import DatabaseOutcomeRecorder
from permitapi.sources.browser.reader import page_reader
from permitapi.sources.gateway import SourceGateway
from permitapi.sources.http import PortalHttp
from permitapi.sources.policies import build_policies, default_policy
from permitapi.sources.registry import Directory, default_directory
from permitapi.sources.shared_circuit import SharedCircuits
from permitapi.sources.shared_pace import SharedPacer
from permitapi.watch import observation
from permitapi.watch.jobs import WatchCheck
from permitapi.webhook import fanout
from permitapi.webhook.jobs import DeliveryJobs, MonitoringRetention
from permitapi.worker import runner
from permitapi.worker.runner import JobSource, Worker


def wire() -> None:
    """Register the subscribers and observers (idempotent: every context built calls it)."""
    events.subscribe(fanout.enqueue_deliveries)
    observers.observe_stores(observation.observe_store)


def job_sources() -> list[JobSource]:
    """Every job source of the service: what runs, and on which schedule.

    idempotency-purge   every 10 min: expired Idempotency-Key rows
    operations          continuously: due operations (asynchronous refreshes)
    deliveries          continuously (idle poll 0.2 s): due webhook delivery attempts
    watch-check         every 5 min: watched permits due for their daily check (LADBS and
                        EPIC-LA batched through their change feeds once a day, Accela
                        permits one by one, each on its own daily slot)
    retention           every 10 min: events, feed entries and delivery history past 30 days
    saved-searches      once a day (leased, one worker): every active saved search evaluated;
                        new matches emit criteria_match, failures retried the next day
    permit-created      once a day (leased, one worker): LADBS and EPIC-LA permits issued in
                        the last three days; new identities emit permit_created; a partial
                        or capped read emits nothing and is retried after 30 min
    sources-canary      once a day (leased, one worker) when PERMITAPI_CANARY_DAILY=true: the
                        drift canary's known public records read from the portals; each
                        jurisdiction's verdict goes to /developers/status.json; a failed pass
                        is retried after 30 min
    """
    return [
        IdempotencyPurge(),
        OperationJobs(),
        DeliveryJobs(),
        MonitoringRetention(),
        WatchCheck(),
        SavedSearchEvaluations(),
        PermitCreatedMonitor(),
        CanaryPass(),
    ]


def source_named(name: str) -> JobSource:
    for source in job_sources():
        if source.name == name:
            return source
    raise KeyError(name)


def in_process_worker(ctx: AppContext) -> AbstractAsyncContextManager[Worker]:
    """Every job source run inside the API process (`permitapi dev`)."""
    return runner.in_process_worker(ctx, job_sources())


def build_context(
    settings: Settings, clock: Clock | None = None, directory: Directory | None = None
) -> AppContext:
    """Everything a request or job needs. The caller closes `engine` and `gateway`."""
    wire()
    engine = create_engine(settings.database_url, pool_size=settings.database_pool_size)
    sessionmaker = create_sessionmaker(engine)
    clock = clock or SystemClock()
    directory = directory or default_directory()
    http = PortalHttp(
        portal_base_url=settings.portal_base_url,
        policies=build_policies(settings, directory),
        default_policy=default_policy(settings),
        shared_pacer=(
            SharedPacer(settings.redis_url, settings.redis_namespace)
            if settings.redis_url
            else None
        ),
        shared_circuits=(
            SharedCircuits(settings.redis_url, settings.redis_namespace)
            if settings.redis_url
            else None
        ),
    )
    return AppContext(
        settings=settings,
        engine=engine,
        sessionmaker=sessionmaker,
        clock=clock,
        directory=directory,
        burst=BurstLimiter(settings.redis_url, namespace=settings.redis_namespace),
        http=http,
        gateway=SourceGateway(
            http, DatabaseOutcomeRecorder(sessionmaker, clock), pages=page_reader(settings, http)
        ),
    )
