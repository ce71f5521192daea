"""Discovery rules around one page: entitlement, the discovery meter, cursors, and the answer.

Metering (spec Limits and Errors, credit settlement):
- one search per request or page: 1 unit reserved on the discovery meter before any source is
  asked, after every 400 check (bad input costs nothing);
- a 200 (partial or not) keeps the unit; a 503 (source_inconclusive, source_lagging) and an
  unexpected failure give it back; a 429 reserves nothing;
- sandbox keys are refused (403 sandbox_not_supported) before anything is reserved.

Two short transactions, reserve then release, instead of one request-long transaction: no
database connection is held while the portals are read (design: the hot path).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from permitapi.account.plans import Meter
from permitapi.account.service import Principal
from permitapi.context import AppContext
from permitapi.discovery import cursor
from permitapi.discovery.filters import parse_search
from permitapi.discovery.hits import hit_data
from permitapi.discovery.search import PageOutcome, SearchBackend, run_page
from permitapi.errors import Forbidden, ServiceUnavailable, TooManyRequests
from permitapi.kit.clock import next_month_start
from permitapi.usage import service as usage
from permitapi.usage.service import MeterState, Reservation


@dataclass(frozen=True, slots=True)
class DiscoveryAnswer:
    body: dict[str, Any]
    meter: MeterState  # after settlement, for the rate-limit headers


async def _reserve(ctx: AppContext, principal: Principal) -> Reservation:
    try:
        async with ctx.transaction() as session:
            return await usage.reserve(session, principal, Meter.DISCOVERY, 1, ctx.clock.now())
    except TooManyRequests as exc:
        if not principal.discovery_addon:
            exc.extra["upgrade_hint"] = (
                "Keys without the Permit Discovery add-on have the free allowance of "
                f"{principal.limit(Meter.DISCOVERY)} searches a month; enable the add-on "
                "for the plan's searches."
            )
        raise


async def _release(ctx: AppContext, reservation: Reservation) -> None:
    async with ctx.transaction() as session:
        await usage.release(session, reservation)


def _unverifiable(outcome: PageOutcome) -> ServiceUnavailable:
    assert outcome.verdict is not None
    assert outcome.retry_after is not None
    if outcome.verdict == "source_lagging":
        detail = (
            "No permits found, but a source has not yet published data for the requested "
            "dates, so the empty result cannot be verified. Retry later."
        )
    else:
        detail = (
            "No permits found, but a source could not be read completely, so the empty "
            "result cannot be verified. Retry later."
        )
    return ServiceUnavailable(
        detail,
        code=outcome.verdict,
        extra={
            "retry_after_seconds": outcome.retry_after,
            "warnings": outcome.warnings,
            "source_freshness": _jsonable_freshness(outcome),
        },
        headers={"Retry-After": str(outcome.retry_after)},
    )


def _jsonable_freshness(outcome: PageOutcome) -> dict[str, dict[str, Any]]:
    return {
        source: {k: (v.isoformat() if hasattr(v, "isoformat") else v) for k, v in fresh.items()}
        for source, fresh in outcome.freshness.items()
    }


async def search_permits(
    ctx: AppContext,
    backend: SearchBackend,
    principal: Principal,
    params: Iterable[tuple[str, str]],
    *,
    retry_delays: Sequence[float] | None = None,
    sleep: Callable[[float], Awaitable[None]] | None = None,
) -> DiscoveryAnswer:
    """One discovery page for a live key.

    Raises 403 sandbox_not_supported, 400 (filters, invalid_cursor), 429 rate_limit_exceeded,
    503 source_inconclusive / source_lagging (with Retry-After, warnings and freshness).
    """
    if principal.is_sandbox:
        raise Forbidden(
            "Discovery is not available to sandbox keys; use a live key.",
            code="sandbox_not_supported",
        )
    query = parse_search(params)
    secret = ctx.settings.secret_key.get_secret_value()
    now = ctx.clock.now()
    if query.cursor is not None:
        position = cursor.decode(secret, query, principal.api_key_id, query.cursor, now)
    else:
        position = cursor.Position.start(query.sources)

    reservation = await _reserve(ctx, principal)
    try:
        outcome = await run_page(
            backend,
            ctx.directory,
            query,
            position,
            now=now,
            first_page=query.cursor is None,
            retry_delays=retry_delays,
            **({"sleep": sleep} if sleep is not None else {}),
        )
    except BaseException:
        await _release(ctx, reservation)
        raise
    if outcome.verdict is not None:
        await _release(ctx, reservation)
        raise _unverifiable(outcome)

    # The cursor is stamped at the end of the page, so its 15 minutes are the client's.
    finished = ctx.clock.now()
    next_cursor = (
        cursor.encode(secret, query, principal.api_key_id, outcome.next_position, finished)
        if outcome.next_position is not None
        else None
    )
    body = {
        "results": [hit_data(h) for h in outcome.hits],
        "result_count": len(outcome.hits),
        "pagination": {"has_more": next_cursor is not None, "next_cursor": next_cursor},
        "partial": outcome.partial,
        "warnings": outcome.warnings,
        "source_freshness": outcome.freshness,
    }
    meter = MeterState(reservation.limit, reservation.used_after, next_month_start(now))
    return DiscoveryAnswer(body, meter)
