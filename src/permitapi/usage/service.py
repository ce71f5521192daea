"""Metering rules: reserve before work, then settle (keep) or release (give back).

Settlement follows the contract: responses below 400 (including 300) and confirmed 404s keep
the reserved credits; validation, authentication and throttling errors and upstream 5xx release
them. Burst-limited calls never reach a reservation, so they never count against the month.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession

from permitapi.account import auth
from permitapi.account.plans import Meter
from permitapi.account.service import Principal
from permitapi.errors import TooManyRequests
from permitapi.kit.burst import BurstLimiter
from permitapi.kit.clock import isoformat_z, month_start, next_month_start, period_of
from permitapi.usage import repository
from permitapi.usage.window_refusal import window_spent


@dataclass(frozen=True, slots=True)
class Reservation:
    api_key_id: str
    meter: Meter
    period: str
    units: int
    used_after: int
    limit: int


@dataclass(frozen=True, slots=True)
class MeterState:
    limit: int
    used: int
    reset_at: datetime

    @property
    def remaining(self) -> int:
        return max(0, self.limit - self.used)


async def reserve(
    session: AsyncSession, principal: Principal, meter: Meter, units: int, now: datetime
) -> Reservation:
    """Atomically take `units` from this month's meter, or raise 429 rate_limit_exceeded (401
    invalid_api_key when the key was deactivated since the caller resolved it).

    Free keys and keys without overage stop at the limit; paid keys with overage go past it,
    accruing overage units. Sandbox keys are never metered: callers do not reserve for them.
    The limit and the overage rule are the account's as stored now, not the principal's (which
    may come from a process's key cache): a plan change decides the next reservation.
    """
    period = period_of(now)
    consumed = await repository.try_consume(session, principal.api_key_id, meter, period, units)
    if consumed is None:
        await repository.ensure_meter(session, principal.api_key_id, meter.value, period)
        consumed = await repository.try_consume(session, principal.api_key_id, meter, period, units)
    if consumed is None:
        await auth.ensure_active(session, principal)
        current = (await repository.used_by_meter(session, principal.api_key_id, period)).get(
            meter.value, 0
        )
        limit = await repository.current_limit(session, principal.api_key_id, meter)
        if limit is None:
            limit = principal.limit(meter)
        reset_at = next_month_start(now)
        raise TooManyRequests(
            f"Monthly {meter.value} limit of {limit} reached"
            + (f" ({units} needed, {max(0, limit - current)} left)" if units > 1 else "")
            + ". Wait for the reset, enable overage, or change plan.",
            code="rate_limit_exceeded",
            extra={
                "meter": meter.value,
                "limit": limit,
                "used": current,
                "requested": units,
                "resets_at": isoformat_z(reset_at),
            },
        )
    return Reservation(principal.api_key_id, meter, period, units, consumed.used, consumed.limit)


async def release(session: AsyncSession, reservation: Reservation) -> None:
    """Give reserved units back to the month they were taken from."""
    await repository.give_back(
        session,
        reservation.api_key_id,
        reservation.meter.value,
        reservation.period,
        reservation.units,
    )


async def meter_state(
    session: AsyncSession, principal: Principal, meter: Meter, now: datetime
) -> MeterState:
    used = (await repository.used_by_meter(session, principal.api_key_id, period_of(now))).get(
        meter.value, 0
    )
    return MeterState(principal.limit(meter), used, next_month_start(now))


async def check_burst(burst: BurstLimiter, principal: Principal) -> None:
    """Raise 429 burst_limit_exceeded past the plan's calls per minute."""
    verdict = await burst.hit_per_minute(principal.api_key_id, principal.plan.burst_per_minute)
    if not verdict.allowed:
        raise window_spent(
            f"More than {principal.plan.burst_per_minute} calls in one minute. "
            f"Retry after {verdict.retry_after_seconds} seconds.",
            "burst_limit_exceeded",
            verdict,
        )


async def usage_report(
    session: AsyncSession, principal: Principal, now: datetime
) -> dict[str, Any]:
    """The GET /usage body: both meters of the current UTC month."""
    period = period_of(now)
    used = await repository.used_by_meter(session, principal.api_key_id, period)
    meters: dict[str, Any] = {}
    for meter in Meter:
        if principal.is_sandbox:
            meters[meter.value] = {
                "used": 0,
                "limit": None,
                "remaining": None,
                "percent_used": None,
                "metered": False,
                "enabled": True,
            }
            continue
        limit = principal.limit(meter)
        value = used.get(meter.value, 0)
        meters[meter.value] = {
            "used": value,
            "limit": limit,
            "remaining": max(0, limit - value),
            "percent_used": round(100.0 * value / limit, 2) if limit else 0.0,
            "metered": True,
            "enabled": True,
        }
    return {
        "plan": principal.plan.name.value,
        "is_sandbox": principal.is_sandbox,
        "period_start": isoformat_z(month_start(now)),
        "resets_at": isoformat_z(next_month_start(now)),
        "overage_enabled": principal.overage_enabled,
        "lookup": meters[Meter.LOOKUP.value],
        "discovery": meters[Meter.DISCOVERY.value],
    }
