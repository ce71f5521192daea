"""An injectable clock, so tests can move time (cache expiry, cursors, retries, month ends)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Protocol


class Clock(Protocol):
    def now(self) -> datetime:
        """The current time, timezone-aware UTC."""
        ...


class SystemClock:
    def now(self) -> datetime:
        return datetime.now(UTC)


class FrozenClock:
    """A clock that only moves when told to."""

    def __init__(self, start: datetime) -> None:
        self._now = start.astimezone(UTC)

    def now(self) -> datetime:
        return self._now

    def advance(self, delta: timedelta) -> None:
        self._now += delta

    def set(self, moment: datetime) -> None:
        self._now = moment.astimezone(UTC)


def isoformat_z(moment: datetime) -> str:
    """ISO 8601 UTC with a trailing Z, the one timestamp format of the API."""
    return moment.astimezone(UTC).isoformat().replace("+00:00", "Z")


def month_start(moment: datetime) -> datetime:
    moment = moment.astimezone(UTC)
    return moment.replace(day=1, hour=0, minute=0, second=0, microsecond=0)


def next_month_start(moment: datetime) -> datetime:
    start = month_start(moment)
    return (start + timedelta(days=32)).replace(day=1)


def period_of(moment: datetime) -> str:
    """The UTC calendar month a moment falls in, as YYYY-MM: the key of monthly meters."""
    return moment.astimezone(UTC).strftime("%Y-%m")
