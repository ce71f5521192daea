"""Tracks a request's reservation so its rate-limit headers describe the meter after
settlement, without another database read on the hot path; and `metered`, the settlement of a
stored read (the canonical resource and its details), shared by REST and the tool server."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import datetime
from typing import TypeVar

from sqlalchemy.ext.asyncio import AsyncSession

from permitapi.account.plans import LOOKUP_COST, Meter
from permitapi.account.service import Principal
from permitapi.context import AppContext
from permitapi.errors import ApiError
from permitapi.kit.clock import next_month_start
from permitapi.usage import service as usage
from permitapi.usage.service import MeterState, Reservation

T = TypeVar("T")


@dataclass
class MeterTracker:
    state: MeterState | None = None

    def reserved(self, reservation: Reservation, now: datetime) -> None:
        self.state = MeterState(reservation.limit, reservation.used_after, next_month_start(now))

    def released(self, units: int) -> None:
        if self.state is not None:
            self.state = MeterState(
                self.state.limit, max(0, self.state.used - units), self.state.reset_at
            )


# Settled like GET status (docs/decisions.md, "Lookups and operations", settlement): answers
# below 400 (including 300 multiple_jurisdictions) keep the credit, and so does 404
# jurisdiction_not_supported, the definitive answer status lookups charge for (no published
# format fits, nothing stored), decided by the directory, never by a portal. Every other error
# releases: `permit_not_found` on a stored read means "nothing stored yet" (these reads never
# fetch), not a portal-confirmed 404.
_KEPT_ERRORS = frozenset({"jurisdiction_not_supported"})


def keeps_credits(error: ApiError) -> bool:
    return error.status < 400 or error.code in _KEPT_ERRORS


async def metered(
    ctx: AppContext,
    principal: Principal,
    read: Callable[[AsyncSession], Awaitable[T]],
    meter: MeterTracker,
    *,
    units: int = LOOKUP_COST,
) -> T:
    """Run `read` after reserving `units` lookup credits (none for sandbox keys).

    The reservation and the read share one transaction: committing keeps the credits, rolling
    back gives them back, so a release can never be lost between two transactions. `meter`
    records a kept reservation (for the caller's rate-limit headers); a released one leaves it
    untouched.
    """
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
                if reservation is not None:
                    meter.reserved(reservation, ctx.clock.now())
            else:
                await session.rollback()
            raise
        await session.commit()
        if reservation is not None:
            meter.reserved(reservation, ctx.clock.now())
        return result
    finally:
        await session.close()
