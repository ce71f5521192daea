"""A small in-memory stand-in for the portal adapters (a fake of a dependency of the lookup
service, not of the service): permits to serve, a fault to raise, a latency, and a count of
the requests made."""

from __future__ import annotations

import asyncio
from collections import Counter
from datetime import date

from permitapi.context import AppContext
from permitapi.sources.base import (
    HealthProbe,
    NormalizedStatus,
    NotFoundAtSource,
    PermitSnapshot,
    SearchCriteria,
    SearchNotSupported,
    SearchPage,
    SourceError,
)
from permitapi.sources.registry import Jurisdiction


def snapshot(
    jurisdiction: str,
    number: str,
    raw_status: str = "Issued",
    status: NormalizedStatus = NormalizedStatus.ISSUED,
) -> PermitSnapshot:
    return PermitSnapshot(
        jurisdiction=jurisdiction,
        permit_number=number,
        raw_status=raw_status,
        status=status,
        status_date=date(2026, 10, 1),
        permit_type="Bldg-Addition",
        address="1234 W Sunset Blvd, Los Angeles, CA 90026",
        work_description="Add a bedroom",
        issued_date=date(2026, 10, 1),
    )


class FakePortal:
    """Serves every family; register with `install(ctx)`."""

    slow = False

    def __init__(self, family: str = "any") -> None:
        self.family = family
        self.permits: dict[tuple[str, str], PermitSnapshot] = {}
        self.fault: SourceError | None = None
        self.latency = 0.0
        self.requests: Counter[tuple[str, str]] = Counter()
        self.in_flight = 0
        self.peak_in_flight = 0

    def add(self, snap: PermitSnapshot) -> PermitSnapshot:
        self.permits[(snap.jurisdiction, snap.permit_number.upper())] = snap
        return snap

    @property
    def total_requests(self) -> int:
        return sum(self.requests.values())

    async def fetch_permit(self, jurisdiction: Jurisdiction, permit_number: str) -> PermitSnapshot:
        self.requests[(jurisdiction.slug, permit_number)] += 1
        self.in_flight += 1
        self.peak_in_flight = max(self.peak_in_flight, self.in_flight)
        try:
            if self.latency:
                await asyncio.sleep(self.latency)
        finally:
            self.in_flight -= 1
        if self.fault is not None:
            raise self.fault
        found = self.permits.get((jurisdiction.slug, permit_number.upper()))
        if found is None:
            raise NotFoundAtSource(jurisdiction.slug, "no such permit")
        return found

    async def search(self, jurisdiction: Jurisdiction, criteria: SearchCriteria) -> SearchPage:
        raise SearchNotSupported(jurisdiction.slug, "fake")

    async def health(self, jurisdiction: Jurisdiction) -> HealthProbe:
        return HealthProbe(ok=True, detail="fake")

    def install(self, ctx: AppContext) -> FakePortal:
        for family in ("ladbs", "epicla", "aca"):
            ctx.gateway.use_adapter(family, self)
        return self
