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
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Literal

from sqlalchemy.ext.asyncio import AsyncSession

from permitapi.context import AppContext
from permitapi.coverage import service as coverage
from permitapi.kit.ids import new_owner_id
from permitapi.permit import repository as permits
from permitapi.permit.codec import encode_snapshot
from permitapi.permit.observers import before_store
from permitapi.sources.base import (
    Blocked,
    NotFoundAtSource,
    PermitSnapshot,
    PortalChanged,
    RetryLater,
)
from permitapi.sources.detect import permit_id
from permitapi.sources.registry import Jurisdiction
from permitapi.sources.status import NORMALIZATION_VERSION

log = logging.getLogger("permitapi.permit.lookup.refresh")

WAIT_POLL_SECONDS = 0.05
DEFAULT_RETRY_AFTER = 30
# last_failure_reason when the portal confirmed the permit missing (not an outage).
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


class SingleFlight:
    """In-process layer: one running refresh task per key; everyone awaits its result."""

    def __init__(self) -> None:
        self._running: dict[tuple[str, str], asyncio.Task[RefreshOutcome]] = {}
        self.started = 0  # refresh tasks started (observable in tests)

    def running(self, key: tuple[str, str]) -> bool:
        return key in self._running

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


async def refresh(
    ctx: AppContext, jurisdiction: Jurisdiction, number: str, since: datetime | None = None
) -> RefreshOutcome:
    """Fetch `number` (normalised) from its portal and store the outcome on its permits row.

    Concurrent calls for one permit, in this process or in others sharing the database, cause
    one portal request. `since`: when the caller found the cache not fresh; a successful fetch
    stored after that moment (by another process) is used instead of fetching again. Never
    raises for a portal failure: the outcome says what happened.
    """
    return await single_flight(ctx).run(
        (jurisdiction.slug, number), lambda: _refresh_once(ctx, jurisdiction, number, since)
    )


async def _refresh_once(
    ctx: AppContext, jurisdiction: Jurisdiction, number: str, since: datetime | None
) -> RefreshOutcome:
    owner = new_owner_id()
    lease = timedelta(seconds=ctx.settings.refresh_lease_seconds)
    while True:
        now = ctx.clock.now()
        async with ctx.transaction() as session:
            await permits.ensure_row(
                session,
                permit_id=str(permit_id(jurisdiction.slug, number)),
                jurisdiction=jurisdiction.slug,
                permit_number=number,
                now=now,
            )
            claimed = await permits.claim_refresh(
                session, jurisdiction.slug, number, owner, now, now + lease
            )
            moot = False
            if claimed and since is not None:
                state = await permits.refresh_state(session, jurisdiction.slug, number)
                moot = (
                    state is not None
                    and state.fetched_at is not None
                    and state.fetched_at > since
                    and state.last_failure_reason is None
                )
                if moot:
                    await permits.release_refresh(session, jurisdiction.slug, number, owner)
        if moot:
            # Another process fetched between our cache read and our claim.
            return RefreshOutcome("fetched")
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


@dataclass
class _Fetched:
    jurisdiction: Jurisdiction
    number: str
    outcome: RefreshOutcome
    snapshot: PermitSnapshot | None


async def _fetch(ctx: AppContext, jurisdiction: Jurisdiction, number: str) -> _Fetched:
    """One portal fetch, with no database connection held; portal failures become outcomes."""
    try:
        snapshot = await ctx.gateway.fetch_permit(jurisdiction, number)
    except Exception as exc:
        return _fetched(jurisdiction, number, exc)
    return _fetched(jurisdiction, number, snapshot)


def _fetched(
    jurisdiction: Jurisdiction, number: str, result: PermitSnapshot | Exception
) -> _Fetched:
    if isinstance(result, PermitSnapshot):
        return _Fetched(jurisdiction, number, RefreshOutcome("fetched"), result)
    if isinstance(result, NotFoundAtSource):
        outcome = RefreshOutcome("not_found", message=result.message)
    elif isinstance(result, RetryLater):
        reason = _RETRY_REASONS.get(result.reason, "source_unavailable")
        retry_after = max(1, round(result.retry_after))
        outcome = RefreshOutcome("failed", reason, retry_after, result.message)
    elif isinstance(result, PortalChanged):
        outcome = RefreshOutcome("failed", "source_changed", message=result.message)
    elif isinstance(result, Blocked):
        outcome = RefreshOutcome("failed", "source_blocked", message=result.message)
    else:
        log.error(
            "unexpected failure fetching %s %s",
            jurisdiction.slug,
            number,
            exc_info=(type(result), result, result.__traceback__),
        )
        outcome = RefreshOutcome("failed", "source_error", message="unexpected fetch failure")
    return _Fetched(jurisdiction, number, outcome, None)


async def _store(session: AsyncSession, results: list[_Fetched], now: datetime) -> None:
    """Record fetch results on their permits rows (dropping the leases), plus the coverage
    observations of the successful ones: four statements, whatever the count, unless a
    permit is watched (then its events are emitted in this transaction by the store observer
    the composition module registers: watch.observation)."""
    fetched = [(f, f.snapshot) for f in results if f.snapshot is not None]
    identities = [(f.jurisdiction.slug, f.number) for f, _ in fetched]
    pending = await before_store(session, identities)
    await permits.store_snapshots(
        session, [_representation(f, snapshot) for f, snapshot in fetched], now
    )
    if pending:
        stored = {(f.jurisdiction.slug, f.number): snapshot for f, snapshot in fetched}
        for after in pending:
            await after(session, stored, now)
    await coverage.record_observations(session, [snapshot for _, snapshot in fetched], now)
    failures = [
        (f.jurisdiction.slug, f.number, _failure_reason(f.outcome))
        for f in results
        if f.snapshot is None
    ]
    await permits.store_failures(session, failures, now)


def _representation(fetched: _Fetched, snapshot: PermitSnapshot) -> permits.Representation:
    return permits.Representation(
        jurisdiction=fetched.jurisdiction.slug,
        permit_number=fetched.number,
        display_number=snapshot.permit_number or fetched.number,
        raw_status=snapshot.raw_status,
        normalized_status=snapshot.status.value,
        status_date=snapshot.status_date,
        permit_type=snapshot.permit_type,
        issued_date=snapshot.issued_date,
        applied_date=snapshot.applied_date,
        snapshot=encode_snapshot(snapshot),
        normalization_version=NORMALIZATION_VERSION,
    )


def _failure_reason(outcome: RefreshOutcome) -> str:
    return NOT_FOUND if outcome.kind == "not_found" else (outcome.reason or "source_error")


async def _fetch_and_store(
    ctx: AppContext, jurisdiction: Jurisdiction, number: str
) -> RefreshOutcome:
    fetched = await _fetch(ctx, jurisdiction, number)
    async with ctx.transaction() as session:
        await _store(session, [fetched], ctx.clock.now())
    return fetched.outcome


# -- many permits at once (batch status) ----------------------------------------------------


async def refresh_many(
    ctx: AppContext,
    targets: list[tuple[Jurisdiction, str]],
    since: datetime,
) -> dict[tuple[str, str], RefreshOutcome]:
    """`refresh` for many permits with two short transactions in all, each a constant number
    of statements whatever the batch size: one claims every lease, one stores every result.
    Fetches run concurrently within each source's politeness caps. Permits another caller in
    this process is already refreshing, or whose lease another process holds, are joined as
    `refresh` does.
    """
    flight = single_flight(ctx)
    unique = {(j.slug, n): (j, n) for j, n in targets}
    free = [key for key in unique if not flight.running(key)]
    claimed, moot = await _claim_many(ctx, free, since) if free else (set(), set())
    to_fetch = [unique[key] for key in free if key in claimed and key not in moot]
    bulk = asyncio.ensure_future(_fetch_and_store_many(ctx, to_fetch))

    async def claimed_result(key: tuple[str, str]) -> RefreshOutcome:
        if key in moot:
            return RefreshOutcome("fetched")
        return (await asyncio.shield(bulk))[key]

    async def one(key: tuple[str, str]) -> RefreshOutcome:
        jurisdiction, number = unique[key]
        if key in claimed:
            return await flight.run(key, lambda: claimed_result(key))
        return await refresh(ctx, jurisdiction, number, since)

    outcomes = await asyncio.gather(*(one(key) for key in unique))
    return dict(zip(unique, outcomes, strict=True))


async def _claim_many(
    ctx: AppContext, keys: list[tuple[str, str]], since: datetime
) -> tuple[set[tuple[str, str]], set[tuple[str, str]]]:
    """Create the identity rows and take every lease nobody holds, in one transaction. Returns
    the keys claimed and, among them, those already made moot: another process stored a
    successful fetch after `since` (their leases are given back at once)."""
    owner = new_owner_id()
    now = ctx.clock.now()
    until = now + timedelta(seconds=ctx.settings.refresh_lease_seconds)
    async with ctx.transaction() as session:
        await permits.ensure_rows(session, [(str(permit_id(*key)), *key) for key in keys], now)
        claims = await permits.claim_refreshes(session, keys, owner, now, until)
        moot = {
            (c.jurisdiction, c.permit_number)
            for c in claims
            if c.fetched_at and c.fetched_at > since and not c.last_failure_reason
        }
        await permits.release_refreshes(session, moot, owner)
    return {(c.jurisdiction, c.permit_number) for c in claims}, moot


async def _fetch_and_store_many(
    ctx: AppContext, targets: list[tuple[Jurisdiction, str]]
) -> dict[tuple[str, str], RefreshOutcome]:
    """Each jurisdiction's permits through `SourceGateway.fetch_many` (shared reads where the
    family allows them, politeness caps either way), jurisdictions concurrently."""
    by_source: dict[str, tuple[Jurisdiction, list[str]]] = {}
    for jurisdiction, number in targets:
        by_source.setdefault(jurisdiction.slug, (jurisdiction, []))[1].append(number)

    async def source(jurisdiction: Jurisdiction, numbers: list[str]) -> list[_Fetched]:
        try:
            fetched = await ctx.gateway.fetch_many(jurisdiction, numbers)
        except Exception as exc:
            return [_fetched(jurisdiction, n, exc) for n in numbers]
        return [_fetched(jurisdiction, n, fetched[n]) for n in numbers]

    groups = await asyncio.gather(*(source(j, ns) for j, ns in by_source.values()))
    results = [fetched for group in groups for fetched in group]
    if results:
        async with ctx.transaction() as session:
            await _store(session, results, ctx.clock.now())
    return {(f.jurisdiction.slug, f.number): f.outcome for f in results}
