"""Status lookups: one permit (GET status) and the per-item logic batch status shares.

A lookup spans a portal fetch and no connection may be held across one, so this module opens
its own short transactions (`ctx.transaction()`): (1) reserve credits, resolve the
jurisdiction and read the cache; (2) outside any transaction, refresh through single flight;
(3) read the stored result and settle. The repository and usage functions it calls never
commit. Settlement (docs/decisions.md): answers below 400, 300 and 404 keep the reservation;
validation errors and upstream failures without cached data give it back.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal

from sqlalchemy.ext.asyncio import AsyncSession

from permitapi.account.plans import FORCE_REFRESH_COST, FORCE_REFRESH_PER_HOUR, LOOKUP_COST, Meter
from permitapi.account.service import Principal
from permitapi.context import AppContext
from permitapi.errors import (
    ApiError,
    Forbidden,
    NotFound,
    ServiceUnavailable,
    TooManyRequests,
)
from permitapi.permit import repository as permits
from permitapi.permit.identity.service import (
    check_number,
    detected,
    explicit_jurisdiction,
    held_match,
    unmatched,
)
from permitapi.permit.lookup import status_record
from permitapi.permit.lookup.fast import path as hot_path
from permitapi.permit.lookup.metering import MeterTracker
from permitapi.permit.lookup.refresh import RefreshOutcome, refresh
from permitapi.permit.operation import service as operations
from permitapi.sources.detect import Candidate, normalize_number
from permitapi.sources.detect import parse_near as detect_near
from permitapi.sources.registry import Jurisdiction
from permitapi.usage import service as usage


@dataclass(frozen=True, slots=True)
class StatusQuery:
    permit_number: str
    jurisdiction: str | None = None
    force_refresh: bool = False
    near: tuple[float, float] | None = None
    respond_async: bool = False


@dataclass(frozen=True, slots=True)
class Target:
    jurisdiction: Jurisdiction
    number: str  # normalised for this jurisdiction


@dataclass
class ItemOutcome:
    """How one lookup ended. `kind`: record (200), operation (202) or error."""

    kind: Literal["record", "operation", "error"]
    body: dict[str, Any] = field(default_factory=dict)
    error: ApiError | None = None
    consumed: bool = True  # False: the item's credits were given back


@dataclass(frozen=True, slots=True)
class Resolved:
    """What a lookup knows before its plan's transaction: the target as resolved without the
    database (None: the number needs rule 7 or fits no one jurisdiction; `candidates` are then
    the detected ones), and its cache row when the fast path's exchange read it (`row_read`)."""

    target: Target | None
    candidates: tuple[Candidate, ...] = ()
    row: permits.CachedPermit | None = None
    row_read: bool = False


@dataclass
class Plan:
    outcome: ItemOutcome | None = None  # already decided
    fetch: Target | None = None  # needs a synchronous refresh
    units: int = LOOKUP_COST


# -- parsing and validation ---------------------------------------------------------------------


def parse_near(raw: str | None) -> tuple[float, float] | None:
    """`<lat>,<lon>` in decimal degrees; anything else is ignored silently (contract)."""
    return detect_near(raw)


async def check_force_refresh(ctx: AppContext, principal: Principal) -> None:
    """force_refresh needs a paid plan, and at most FORCE_REFRESH_PER_HOUR an hour per key."""
    if not principal.plan.force_refresh:
        raise Forbidden(
            "force_refresh needs a paid plan (Developer, Pro or Enterprise).",
            code="force_refresh_not_available",
        )
    if principal.is_sandbox:
        return
    verdict = await ctx.burst.hit_per_hour(
        principal.api_key_id, "force_refresh", FORCE_REFRESH_PER_HOUR
    )
    if not verdict.allowed:
        raise TooManyRequests(
            f"At most {FORCE_REFRESH_PER_HOUR} force_refresh lookups per hour. "
            f"Retry after {verdict.retry_after_seconds} seconds.",
            code="force_refresh_limit_exceeded",
            extra={"retry_after_seconds": verdict.retry_after_seconds},
            headers={"Retry-After": str(verdict.retry_after_seconds)},
        )


# -- one item ------------------------------------------------------------------------------


def _record(
    ctx: AppContext,
    principal: Principal,
    row: permits.CachedPermit,
    source: status_record.Source,
    now: datetime,
    stale_reason: str | None = None,
) -> ItemOutcome:
    body = status_record.status_record(
        row,
        ctx.directory,
        source=source,
        now=now,
        refresh_available=principal.plan.force_refresh,
        stale_reason=stale_reason,
    )
    return ItemOutcome("record", body)


async def plan_item(
    session: AsyncSession,
    ctx: AppContext,
    principal: Principal,
    query: StatusQuery,
    reservation: usage.Reservation,
    units: int,
    now: datetime,
    prefetched: dict[tuple[str, str], permits.CachedPermit] | None = None,
    resolved: Resolved | None = None,
) -> Plan:
    """Inside the reservation's transaction: resolve, read the cache, or accept an operation.
    `prefetched`: cache rows already read in bulk (absent key: no row), for batch status.
    `resolved`: what the caller already resolved (and maybe read); none of it is redone."""
    if resolved is None:
        resolved = resolve_without_database(ctx, query)
    target = resolved.target
    if target is None:
        match, candidates = await held_match(
            session, ctx.directory, query.permit_number, resolved.candidates
        )
        if match is None:
            error = unmatched(query.permit_number, candidates, example_tail="status")
            return Plan(ItemOutcome("error", error=error), units=units)
        target = Target(match.jurisdiction, match.number)
    key = (target.jurisdiction.slug, target.number)
    if resolved.row_read:
        row = resolved.row
    elif prefetched is not None and resolved.target is not None:
        row = prefetched.get(key)  # batch status read the rows of every quick target in bulk
    else:
        row = await permits.read_cached(session, *key)
    has_data = row is not None and row.has_snapshot
    if row is not None and has_data and not query.force_refresh:
        if status_record.is_fresh(row, now):
            return Plan(_record(ctx, principal, row, "cached", now), units=units)
        if status_record.in_failure_backoff(row, now):
            return Plan(
                _record(ctx, principal, row, "stale_cache", now, row.last_failure_reason),
                units=units,
            )
    if target.jurisdiction.answers_by_operation or (query.force_refresh and query.respond_async):
        body = await operations.create(
            session,
            api_key_id=principal.api_key_id,
            jurisdiction=target.jurisdiction.slug,
            permit_number=target.number,
            force_refresh=query.force_refresh,
            reserved_period=reservation.period,
            reserved_units=units,
            now=now,
        )
        return Plan(ItemOutcome("operation", body), units=units)
    return Plan(fetch=target, units=units)


def permit_not_found(target: Target) -> NotFound:
    return NotFound(
        f"{target.jurisdiction.display_name} has no permit {target.number}.",
        code="permit_not_found",
        extra={"jurisdiction": target.jurisdiction.slug},
    )


def unavailable(target: Target, outcome: RefreshOutcome) -> ServiceUnavailable:
    return ServiceUnavailable(
        f"{target.jurisdiction.display_name} is temporarily unavailable and no cached copy of "
        f"permit {target.number} exists. Retry after {outcome.retry_after} seconds.",
        code="jurisdiction_unavailable",
        extra={
            "jurisdiction": target.jurisdiction.slug,
            "reason": outcome.reason,
            "retry_after_seconds": outcome.retry_after,
        },
        headers={"Retry-After": str(outcome.retry_after)},
    )


async def settle_fetch(
    session: AsyncSession,
    ctx: AppContext,
    principal: Principal,
    target: Target,
    outcome: RefreshOutcome,
    now: datetime,
    prefetched: dict[tuple[str, str], permits.CachedPermit] | None = None,
) -> ItemOutcome:
    """After a refresh: the stored result as a record, or the error; `consumed` says whether
    the item's credits stay spent. `prefetched`: rows read in bulk after the refreshes."""
    if outcome.kind == "not_found":
        return ItemOutcome("error", error=permit_not_found(target))
    key = (target.jurisdiction.slug, target.number)
    if prefetched is not None:
        row = prefetched.get(key)
    else:
        row = await permits.read_cached(session, *key)
    if row is not None and row.has_snapshot:
        if outcome.kind == "fetched":
            return _record(ctx, principal, row, "live_scrape", now)
        return _record(ctx, principal, row, "stale_cache", now, outcome.reason)
    return ItemOutcome("error", error=unavailable(target, outcome), consumed=False)


# -- the hot path: a fresh cache hit ---


def resolve_without_database(ctx: AppContext, query: StatusQuery) -> Resolved:
    """The target when it needs no database (an explicit slug, which raises when unknown, or
    the one detected jurisdiction), else no target and the detected candidates."""
    if query.jurisdiction is not None:
        jurisdiction = explicit_jurisdiction(ctx.directory, query.jurisdiction)
        return Resolved(Target(jurisdiction, normalize_number(jurisdiction, query.permit_number)))
    match, candidates = detected(ctx.directory, query.permit_number, query.near)
    target = None if match is None else Target(match.jurisdiction, match.number)
    return Resolved(target, tuple(candidates))


def quick_target(ctx: AppContext, query: StatusQuery) -> Target | None:
    """The target when it needs no database to resolve (explicit, or detected)."""
    return resolve_without_database(ctx, query).target


# -- GET status ----------------------------------------------------------------------------


async def lookup_status(
    ctx: AppContext, principal: Principal, query: StatusQuery, meter: MeterTracker
) -> ItemOutcome:
    """One status lookup for a live key. Raises ApiError for refusals made before any credit
    is reserved (validation, entitlement, limits); returns the outcome otherwise."""
    check_number(query.permit_number)
    # Resolved once, before any credit is reserved (an unknown slug is refused here); the plan
    # below reuses it.
    resolved = resolve_without_database(ctx, query)
    target = resolved.target
    if query.force_refresh:
        await check_force_refresh(ctx, principal)
    units = FORCE_REFRESH_COST if query.force_refresh else LOOKUP_COST
    now = ctx.clock.now()
    reservation: usage.Reservation | None = None
    hot_reserved = False
    if target is not None and ctx.settings.fast_path and not query.force_refresh:
        hot = await hot_path.reserve_and_read(
            ctx, principal, units, target.jurisdiction.slug, target.number, now
        )
        reservation = hot.reservation
        hot_reserved = reservation is not None
        row = hot.row
        fresh = row is not None and row.has_snapshot and status_record.is_fresh(row, now)
        if reservation is not None and row is not None and fresh:
            meter.reserved(reservation, now)
            return _record(ctx, principal, row, "cached", now)
        resolved = Resolved(target, resolved.candidates, row, row_read=hot.row_read)
    try:
        async with ctx.transaction() as session:
            if reservation is None:
                reservation = await usage.reserve(session, principal, Meter.LOOKUP, units, now)
            plan = await plan_item(
                session, ctx, principal, query, reservation, units, now, resolved=resolved
            )
    except Exception:
        if hot_reserved and reservation is not None:
            # The hot path's reservation was committed on its own: give it back. A reservation
            # made inside the failed transaction was rolled back with it and is not released.
            async with ctx.transaction() as session:
                await usage.release(session, reservation)
        raise
    meter.reserved(reservation, now)
    if plan.outcome is not None:
        return plan.outcome
    assert plan.fetch is not None
    outcome = await refresh(ctx, plan.fetch.jurisdiction, plan.fetch.number, since=now)
    now = ctx.clock.now()
    async with ctx.transaction() as session:
        item = await settle_fetch(session, ctx, principal, plan.fetch, outcome, now)
        if not item.consumed:
            await usage.release(session, reservation)
    if not item.consumed:
        meter.released(units)
    return item
