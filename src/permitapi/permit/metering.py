"""Tracks a request's reservation so its rate-limit headers describe the meter after
settlement, without another database read on the hot path."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from permitapi.kit.clock import next_month_start
from permitapi.usage.service import MeterState, Reservation


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
