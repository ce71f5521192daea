"""Watch rules: enrollment (POST watch), unwatching, the key's list, plan caps.

A watch is a live key monitoring one permit: its permit events (watch.observation) reach the
key's feed and webhooks. Enrollment resolves the number exactly as a status lookup does (the
same 400, 300 and 404 answers) and, for a permit never looked up, reads it from its portal
once, so that the answer carries the permit's status and the first daily check has a
representation to compare with. Enrolling costs no credits: watches are paid for by the plan's
cap. "Tracked in an account" in the contract is this: the permits an account's keys watch.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, Final

from sqlalchemy.ext.asyncio import AsyncSession

from permitapi.account.entitlements import PlanCap, ensure_below_cap, require_live_key
from permitapi.account.service import Principal
from permitapi.context import AppContext
from permitapi.errors import NotFound
from permitapi.kit.clock import isoformat_z
from permitapi.kit.ids import new_uuid
from permitapi.permit import repository as permits
from permitapi.permit.identity import service as identity
from permitapi.permit.lookup import status_record
from permitapi.permit.lookup.refresh import refresh
from permitapi.permit.lookup.service import Target, permit_not_found, unavailable
from permitapi.sources.detect import normalize_number
from permitapi.watch import repository
from permitapi.watch.models import Watch
from permitapi.webhook import repository as webhooks

WHAT: Final = "Watches"
CHECK_PERIOD: Final = timedelta(days=1)
NO_WEBHOOK_WARNING: Final = (
    "This key has no active webhook: events of this permit reach only GET /api/v1/events. "
    "Register one with POST /api/v1/webhooks to have them pushed."
)


def watch_not_found(permit_number: str) -> NotFound:
    return NotFound(
        f"This key has no active watch on permit {permit_number}.", code="watch_not_found"
    )


def first_check_at(now: datetime) -> datetime:
    """A day on, plus up to an hour of spread, so that watches enrolled together are not all
    checked in the same minute (the change-feed sources batch them anyway)."""
    return now + CHECK_PERIOD + timedelta(seconds=random.uniform(0, 3600))


@dataclass(frozen=True, slots=True)
class Enrolled:
    body: dict[str, Any]
    created: bool  # False: the key already watched the permit (200)


async def _resolve(ctx: AppContext, raw_number: str, jurisdiction: str | None) -> Target:
    async with ctx.sessionmaker() as session:
        found, row = await identity.resolve(
            session, ctx.directory, raw_number, jurisdiction, example_tail="watch"
        )
    target = Target(found.jurisdiction, found.permit_number)
    if row is not None:
        return target
    outcome = await refresh(ctx, target.jurisdiction, target.number)
    if outcome.kind == "not_found":
        raise permit_not_found(target)
    if outcome.kind == "failed":
        raise unavailable(target, outcome)
    return target


WATCH_CAP: Final = PlanCap(
    code="watch_limit_reached",
    allows="active watch(es)",
    upgrade_hint="Upgrade the plan for more active watches, or unwatch a permit.",
    enterprise_hint="Unwatch a permit to watch another.",
)


async def _ensure_room(session: AsyncSession, principal: Principal) -> None:
    await ensure_below_cap(
        session,
        principal,
        principal.plan.active_watches,
        WATCH_CAP,
        lambda: repository.count_active(session, principal.api_key_id),
    )


async def enroll(
    ctx: AppContext, principal: Principal, raw_number: str, jurisdiction: str | None
) -> Enrolled:
    require_live_key(principal, WHAT)
    target = await _resolve(ctx, raw_number, jurisdiction)
    slug, number = target.jurisdiction.slug, target.number
    now = ctx.clock.now()
    async with ctx.transaction() as session:
        watch = await repository.active_watch(session, principal.api_key_id, slug, number)
        created = watch is None
        if watch is None:
            await _ensure_room(session, principal)
            watch = Watch(
                watch_id=new_uuid(),
                api_key_id=principal.api_key_id,
                jurisdiction=slug,
                permit_number=number,
                status=repository.ACTIVE,
                created_at=now,
            )
            await repository.insert_watch(session, watch)
            await repository.ensure_watched_permit(session, slug, number, first_check_at(now))
        row = await permits.get_by_identity(session, slug, number)
        hooks = await webhooks.active_webhooks_of(session, [principal.api_key_id])
    body: dict[str, Any] = {
        "permit_number": row.display_number if row is not None else number,
        "jurisdiction": slug,
        "jurisdiction_display": target.jurisdiction.display_name,
        "status": status_record.display_status(row.raw_status if row is not None else None),
        "status_phase": status_record.status_phase(row.normalized_status if row else None),
        "watching": True,
        "created_at": isoformat_z(watch.created_at),
    }
    if not hooks:
        body["warning"] = NO_WEBHOOK_WARNING
    return Enrolled(body, created)


async def unwatch(
    ctx: AppContext, principal: Principal, raw_number: str, jurisdiction: str | None
) -> dict[str, Any]:
    require_live_key(principal, WHAT)
    number = identity.check_number(raw_number)
    async with ctx.transaction() as session:
        watches = await repository.active_watches_of(session, principal.api_key_id)
        matching = [
            w
            for w in watches
            if (jurisdiction is None or w.jurisdiction == jurisdiction)
            and _same_number(ctx, w, number)
        ]
        if not matching:
            raise watch_not_found(number)
        for watch in matching:
            await repository.end_watch(session, watch.watch_id, "removed", ctx.clock.now())
    return {"status": "unwatched", "permit_number": number}


def _same_number(ctx: AppContext, watch: Watch, number: str) -> bool:
    found = ctx.directory.get(watch.jurisdiction)
    if found is None:
        return watch.permit_number == number
    return watch.permit_number == normalize_number(found, number)


async def list_watches(ctx: AppContext, principal: Principal) -> dict[str, Any]:
    require_live_key(principal, WHAT)
    async with ctx.sessionmaker() as session:
        watches = await repository.active_watches_of(session, principal.api_key_id)
        rows = {
            (w.jurisdiction, w.permit_number): await permits.get_by_identity(
                session, w.jurisdiction, w.permit_number
            )
            for w in watches
        }
    cap = principal.plan.active_watches
    listed = []
    for watch in watches:
        row = rows.get((watch.jurisdiction, watch.permit_number))
        listed.append(
            {
                "permit_number": row.display_number if row is not None else watch.permit_number,
                "jurisdiction": watch.jurisdiction,
                "status": status_record.display_status(row.raw_status if row is not None else None),
                "created_at": isoformat_z(watch.created_at),
                "last_event_at": (
                    isoformat_z(watch.last_event_at) if watch.last_event_at else None
                ),
            }
        )
    return {
        "watches": listed,
        "total": len(listed),
        "plan_limit": cap,
        "remaining": max(0, cap - len(listed)),
    }
