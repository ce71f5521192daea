"""POST /permits/batch-status: up to 25 lookups in one call, always answered with 200.

One credit per submitted permit is reserved up front (the whole batch is refused with 429
when the month cannot cover it); each item then settles by the single-lookup rules and the
credits of items that end in validation errors or upstream failures without cache are given
back. Misses are refreshed concurrently, at most `max_concurrency` at a time per source (its
politeness cap), and through single flight, so duplicates cost one portal request.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from permitapi.account.plans import BATCH_MAX_PERMITS, LOOKUP_COST, Meter
from permitapi.account.service import Principal
from permitapi.context import AppContext
from permitapi.errors import ApiError, BadRequest
from permitapi.permit import repository as permits
from permitapi.permit.identity.service import check_number
from permitapi.permit.lookup.metering import MeterTracker
from permitapi.permit.lookup.refresh import refresh_many
from permitapi.permit.lookup.service import (
    ItemOutcome,
    Plan,
    StatusQuery,
    Target,
    plan_item,
    quick_target,
    settle_fetch,
)
from permitapi.usage import service as usage


def _quick_target_or_none(ctx: AppContext, raw: str) -> Target | None:
    try:
        return quick_target(ctx, StatusQuery(check_number(raw, location="body")))
    except BadRequest:
        return None


def check_batch_size(numbers: list[str]) -> None:
    if not 1 <= len(numbers) <= BATCH_MAX_PERMITS:
        raise BadRequest(
            f"permit_numbers must hold 1 to {BATCH_MAX_PERMITS} permit numbers "
            f"({len(numbers)} given).",
            code="invalid_batch_size",
            extra={"parameter": "permit_numbers", "max_items": BATCH_MAX_PERMITS},
        )


_BATCH_CODES = {"permit_not_found": "not_found"}


def error_entry(raw: str, error: ApiError) -> dict[str, Any]:
    """One `errors` item: the single-lookup problem condensed (docs/decisions.md)."""
    code = _BATCH_CODES.get(error.code, error.code)
    if error.code == "jurisdiction_unavailable":
        timed_out = error.extra.get("reason") == "source_timeout"
        code = "upstream_timeout" if timed_out else "upstream_unavailable"
    hint = error.extra.get("jurisdiction")
    if hint is None and error.extra.get("candidates"):
        hint = error.extra["candidates"][0]["slug"]
    return {
        "permit_number": raw,
        "error": code,
        "message": error.detail,
        "jurisdiction_hint": hint,
        "status_code": error.status,
        "retryable": error.status >= 500,
    }


def shape(numbers: list[str], items: list[ItemOutcome]) -> dict[str, Any]:
    results: list[dict[str, Any]] = []
    errors: list[dict[str, Any]] = []
    operations: list[dict[str, Any]] = []
    for raw, item in zip(numbers, items, strict=True):
        if item.kind == "record":
            results.append(item.body)
        elif item.kind == "operation":
            operations.append(item.body)
        else:
            assert item.error is not None
            errors.append(error_entry(raw, item.error))
    return {"results": results, "errors": errors, "operations": operations}


async def batch_status(
    ctx: AppContext, principal: Principal, numbers: list[str], meter: MeterTracker
) -> dict[str, Any]:
    """Live-key batch. Raises only for a bad batch size or an exhausted month (nothing kept)."""
    check_batch_size(numbers)
    now = ctx.clock.now()
    plans: list[Plan] = []
    async with ctx.transaction() as session:
        reservation = await usage.reserve(
            session, principal, Meter.LOOKUP, LOOKUP_COST * len(numbers), now
        )
        # One query for the cache rows of every number whose jurisdiction is detected.
        quick = [_quick_target_or_none(ctx, raw) for raw in numbers]
        prefetched = await permits.read_cached_many(
            session, [(t.jurisdiction.slug, t.number) for t in quick if t is not None]
        )
        for raw in numbers:
            try:
                number = check_number(raw, location="body")
                plans.append(
                    await plan_item(
                        session,
                        ctx,
                        principal,
                        StatusQuery(number),
                        reservation,
                        1,
                        now,
                        prefetched,
                    )
                )
            except BadRequest as exc:
                plans.append(Plan(ItemOutcome("error", error=exc, consumed=False)))
    meter.reserved(reservation, now)
    outcomes = await refresh_many(
        ctx, [(p.fetch.jurisdiction, p.fetch.number) for p in plans if p.fetch is not None], now
    )
    now = ctx.clock.now()
    items: list[ItemOutcome] = []
    async with ctx.transaction() as session:
        stored = await permits.read_cached_many(session, list(outcomes))
        for plan in plans:
            if plan.outcome is not None:
                items.append(plan.outcome)
                continue
            assert plan.fetch is not None
            key = (plan.fetch.jurisdiction.slug, plan.fetch.number)
            items.append(
                await settle_fetch(session, ctx, principal, plan.fetch, outcomes[key], now, stored)
            )
        given_back = sum(LOOKUP_COST for item in items if not item.consumed)
        if given_back:
            await usage.release(session, dataclasses.replace(reservation, units=given_back))
    if given_back:
        meter.released(given_back)
    return shape(numbers, items)
