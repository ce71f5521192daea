"""Refreshing one permit from its portal, at most once at a time per permit.

Single flight has two layers:
- in this process, concurrent callers for one permit share one task (a keyed future map);
- across processes sharing the database, the task first takes the permit row's refresh lease
  with a conditional UPDATE; a process that loses waits, polling the row, until the holder
  stores its result or its lease expires (then it tries to take the lease itself).

No database connection is held while the portal is being fetched: the lease is taken and
committed first, and the result is stored in a second short transaction.
"""

from __future__ import annotations

import asyncio
import logging
import os
import socket
import time
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import timedelta
from typing import Literal

from permitapi.context import AppContext
from permitapi.permit import coverage
from permitapi.permit import repository as permits
from permitapi.permit.codec import encode_snapshot
from permitapi.sources.base import Blocked, NotFoundAtSource, PortalChanged, RetryLater
from permitapi.sources.detect import permit_id
from permitapi.sources.registry import Jurisdiction
from permitapi.sources.status import NORMALIZATION_VERSION

log = logging.getLogger("permitapi.permit.refresh")

WAIT_POLL_SECONDS = 0.05
DEFAULT_RETRY_AFTER = 30
NOT_FOUND = "not_found"

# RetryLater.reason -> the stale_reason answered to clients.
_RETRY_REASONS = {
    "timeout": "source_timeout",
    "down": "source_unavailable",
    "maintenance": "source_maintenance",
    "throttled": "source_throttled",
    "circuit_open": "source_unavailable",
    "server_error": "source_unavailable",
}


@dataclass(frozen=True, slots=True)
class RefreshOutcome:
    kind: Literal["fetched", "not_found", "failed"]
    reason: str | None = None  # stale_reason code when failed
    retry_after: int = DEFAULT_RETRY_AFTER
    message: str = ""


def process_owner() -> str:
    return f"{socket.gethostname()[:24]}:{os.getpid()}:{uuid.uuid4().hex[:8]}"


class SingleFlight:
    """In-process layer: one running refresh task per key; everyone awaits its result."""

    def __init__(self) -> None:
        self._running: dict[tuple[str, str], asyncio.Task[RefreshOutcome]] = {}
        self.started = 0  # refresh tasks started (observable in tests)

    async def run(
        self, key: tuple[str, str], work: Callable[[], Awaitable[RefreshOutcome]]
    ) -> RefreshOutcome:
        task = self._running.get(key)
        if task is None:
            self.started += 1
            task = asyncio.ensure_future(work())
            self._running[key] = task
            task.add_done_callback(lambda _t: self._running.pop(key, None))
        # Shielded: a caller that goes away (client disconnect) must not cancel the refresh
        # the other callers are waiting for, nor leave the row's lease behind.
        return await asyncio.shield(task)


def single_flight(ctx: AppContext) -> SingleFlight:
    flight = ctx.extras.get("permit.single_flight")
    if not isinstance(flight, SingleFlight):
        flight = SingleFlight()
        ctx.extras["permit.single_flight"] = flight
    return flight


async def refresh(ctx: AppContext, jurisdiction: Jurisdiction, number: str) -> RefreshOutcome:
    """Fetch `number` (normalised) from its portal and store the outcome on its permits row.

    Concurrent calls for one permit, in this process or in others sharing the database, cause
    one portal request. Never raises for a portal failure: the outcome says what happened.
    """
    return await single_flight(ctx).run(
        (jurisdiction.slug, number), lambda: _refresh_once(ctx, jurisdiction, number)
    )


async def _refresh_once(ctx: AppContext, jurisdiction: Jurisdiction, number: str) -> RefreshOutcome:
    owner = process_owner()
    lease = timedelta(seconds=ctx.settings.refresh_lease_seconds)
    while True:
        now = ctx.clock.now()
        async with ctx.transaction() as session:
            await permits.ensure_row(
                session,
                permit_id=permit_id(jurisdiction.slug, number),
                jurisdiction=jurisdiction.slug,
                permit_number=number,
                now=now,
            )
            claimed = await permits.claim_refresh(
                session, jurisdiction.slug, number, owner, now, now + lease
            )
        if claimed:
            return await _fetch_and_store(ctx, jurisdiction, number)
        outcome = await _wait_for_holder(ctx, jurisdiction.slug, number, lease)
        if outcome is not None:
            return outcome
        # The holder's lease ran out without a result (it crashed): try to take over.


async def _wait_for_holder(
    ctx: AppContext, slug: str, number: str, lease: timedelta
) -> RefreshOutcome | None:
    give_up = time.monotonic() + lease.total_seconds()
    while time.monotonic() < give_up:
        await asyncio.sleep(WAIT_POLL_SECONDS)
        async with ctx.sessionmaker() as session:
            state = await permits.refresh_state(session, slug, number)
        if state is None:
            return None
        if state.lease_owner is None:
            return _outcome_of(state)
        if state.lease_expires_at is not None and state.lease_expires_at < ctx.clock.now():
            return None
    return None


def _outcome_of(state: permits.RefreshState) -> RefreshOutcome:
    if state.last_failure_reason == NOT_FOUND:
        return RefreshOutcome("not_found")
    if state.last_failure_reason is not None:
        return RefreshOutcome("failed", state.last_failure_reason)
    if state.fetched_at is not None:
        return RefreshOutcome("fetched")
    return RefreshOutcome("failed", "source_unavailable")


async def _fetch_and_store(
    ctx: AppContext, jurisdiction: Jurisdiction, number: str
) -> RefreshOutcome:
    snapshot = None
    try:
        snapshot = await ctx.sources.fetch_permit(jurisdiction, number)
        outcome = RefreshOutcome("fetched")
    except NotFoundAtSource as exc:
        outcome = RefreshOutcome("not_found", message=exc.message)
    except RetryLater as exc:
        reason = _RETRY_REASONS.get(exc.reason, "source_unavailable")
        outcome = RefreshOutcome("failed", reason, max(1, round(exc.retry_after)), exc.message)
    except PortalChanged as exc:
        outcome = RefreshOutcome("failed", "source_changed", message=exc.message)
    except Blocked as exc:
        outcome = RefreshOutcome("failed", "source_blocked", message=exc.message)
    except Exception:
        log.exception("unexpected failure fetching %s %s", jurisdiction.slug, number)
        outcome = RefreshOutcome("failed", "source_error", message="unexpected fetch failure")
    now = ctx.clock.now()
    async with ctx.transaction() as session:
        if snapshot is not None:
            await permits.store_snapshot(
                session,
                jurisdiction.slug,
                number,
                display_number=snapshot.permit_number or number,
                raw_status=snapshot.raw_status,
                normalized_status=snapshot.status.value,
                status_date=snapshot.status_date,
                permit_type=snapshot.permit_type,
                issued_date=snapshot.issued_date,
                applied_date=snapshot.applied_date,
                snapshot=encode_snapshot(snapshot),
                normalization_version=NORMALIZATION_VERSION,
                fetched_at=now,
            )
            await coverage.record_observation(session, snapshot, now)
        else:
            await permits.store_failure(
                session,
                jurisdiction.slug,
                number,
                reason=NOT_FOUND
                if outcome.kind == "not_found"
                else (outcome.reason or "source_error"),
                attempted_at=now,
            )
    return outcome
