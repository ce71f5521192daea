"""Request-level metering: reserve, then settle around a stored read (contract rules).

The reservation and the read share one transaction: committing keeps the credits, rolling back
gives them back, so a release can never be lost between two transactions. Outcomes below 400
(including 300 multiple_jurisdictions) keep the credit, and so does 404
jurisdiction_not_supported: the same definitive answer status lookups charge for (no published
format fits, nothing stored), decided by the directory, never by a portal. Every other error
releases: `permit_not_found` here means "nothing stored yet" (these reads never fetch), not a
portal-confirmed 404.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TypeVar

from fastapi import Request
from sqlalchemy.ext.asyncio import AsyncSession

from permitapi.account.plans import LOOKUP_COST, Meter
from permitapi.account.service import Principal
from permitapi.context import AppContext
from permitapi.errors import ApiError
from permitapi.kit.clock import next_month_start
from permitapi.usage import service as usage
from permitapi.usage.service import MeterState
from permitapi.web.deps import record_meter

T = TypeVar("T")


# Settled like on GET status (docs/decisions.md, "Lookups and operations", settlement).
_KEPT_ERRORS = frozenset({"jurisdiction_not_supported"})


def keeps_credits(error: ApiError) -> bool:
    return error.status < 400 or error.code in _KEPT_ERRORS


async def metered_read(
    request: Request,
    ctx: AppContext,
    principal: Principal,
    read: Callable[[AsyncSession], Awaitable[T]],
    *,
    units: int = LOOKUP_COST,
) -> T:
    """Run `read` after reserving `units` lookup credits (none for sandbox keys)."""
    session = ctx.sessionmaker()
    try:
        await session.begin()
        reservation = None
        if not principal.is_sandbox:
            reservation = await usage.reserve(
                session, principal, Meter.LOOKUP, units, ctx.clock.now()
            )
        try:
            result = await read(session)
        except ApiError as error:
            if keeps_credits(error):
                await session.commit()
                _headers(request, ctx, reservation)
            else:
                await session.rollback()
            raise
        await session.commit()
        _headers(request, ctx, reservation)
        return result
    finally:
        await session.close()


def _headers(request: Request, ctx: AppContext, reservation: usage.Reservation | None) -> None:
    """Rate-limit headers after a kept reservation (auth set them before it)."""
    if reservation is not None:
        reset_at = next_month_start(ctx.clock.now())
        record_meter(request, MeterState(reservation.limit, reservation.used_after, reset_at))
