"""A fake discovery source: an in-memory permit list searched the way a portal would be.

It stands in for the LADBS/EPIC-LA adapters (a dependency of discovery, not the unit under
test): filters applied exactly, newest issue date first then permit number, offset/limit with
`has_more`, and scriptable failures, incomplete pages, freshness and latency.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import date

from permitapi.discovery.merge import distance_mi
from permitapi.sources.base import (
    HealthProbe,
    PermitSnapshot,
    RetryLater,
    SearchCriteria,
    SearchHit,
    SearchPage,
    SourceError,
    SourceFreshness,
)
from permitapi.sources.registry import Jurisdiction


@dataclass
class FakePermit:
    hit: SearchHit
    parcel: str | None = None
    zip: str | None = None


def hit(
    number: str,
    jurisdiction: str,
    issued: date | None,
    *,
    permit_type: str = "Building",
    valuation: float | None = 10_000.0,
    status: str = "Issued",
    lat: float | None = None,
    lon: float | None = None,
    applied: date | None = None,
) -> SearchHit:
    return SearchHit(
        permit_number=number,
        jurisdiction=jurisdiction,
        address=f"{number} Main St",
        permit_type=permit_type,
        status=status,
        valuation=valuation,
        applied_date=applied,
        issued_date=issued,
        latitude=lat,
        longitude=lon,
    )


@dataclass
class FakeSearchSource:
    family: str
    permits: list[FakePermit] = field(default_factory=list)
    slow: bool = False
    # scripted behaviour, consumed one call at a time; None = answer normally
    script: list[SourceError | str | None] = field(default_factory=list)
    fail_always: SourceError | None = None
    freshness: SourceFreshness | None = None
    latency_s: float = 0.0
    calls: list[SearchCriteria] = field(default_factory=list)
    on_call: Callable[[SearchCriteria], None] | None = None

    def add(self, item: SearchHit, *, parcel: str | None = None, zip: str | None = None) -> None:
        self.permits.append(FakePermit(item, parcel, zip))

    def _matches(self, permit: FakePermit, c: SearchCriteria) -> bool:
        h = permit.hit
        if c.parcels and permit.parcel not in c.parcels:
            return False
        if c.zip and permit.zip != c.zip:
            return False
        if c.radius_mi is not None:
            if h.latitude is None or h.longitude is None:
                return False
            assert c.latitude is not None
            assert c.longitude is not None
            if distance_mi(c.latitude, c.longitude, h.latitude, h.longitude) > c.radius_mi:
                return False
        if c.permit_type and h.permit_type != c.permit_type:
            return False
        if c.date_from and (h.issued_date is None or h.issued_date < c.date_from):
            return False
        if c.date_to and (h.issued_date is None or h.issued_date > c.date_to):
            return False
        if c.value_min is not None and (h.valuation is None or h.valuation < c.value_min):
            return False
        if c.value_max is not None and (h.valuation is None or h.valuation > c.value_max):
            return False
        return not (c.status and (h.status or "").lower() != c.status.lower())

    async def search(self, jurisdiction: Jurisdiction, criteria: SearchCriteria) -> SearchPage:
        self.calls.append(criteria)
        if self.on_call is not None:
            self.on_call(criteria)
        if self.latency_s:
            await asyncio.sleep(self.latency_s)
        step = self.script.pop(0) if self.script else None
        if isinstance(step, SourceError):
            raise step
        if self.fail_always is not None:
            raise self.fail_always
        if step == "empty":
            return SearchPage(hits=[], has_more=False, freshness=self.freshness)
        found = [p.hit for p in self.permits if self._matches(p, criteria)]
        found.sort(key=lambda h: h.permit_number, reverse=True)
        # newest first, not yet issued (no date) last, as the adapters ask their sources
        found.sort(key=lambda h: h.issued_date or date.min, reverse=True)
        window = found[criteria.offset : criteria.offset + criteria.limit]
        page = SearchPage(
            hits=window,
            has_more=len(found) > criteria.offset + criteria.limit,
            freshness=self.freshness,
        )
        if step == "incomplete":
            page.complete = False
            page.warnings.append(f"{self.family}: transfer limit exceeded")
        return page

    async def fetch_permit(self, jurisdiction: Jurisdiction, permit_number: str) -> PermitSnapshot:
        raise RetryLater(self.family, "not part of the fake", reason="down")

    async def health(self, jurisdiction: Jurisdiction) -> HealthProbe:
        return HealthProbe(True, "fake")
