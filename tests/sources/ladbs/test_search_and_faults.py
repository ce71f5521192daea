"""Discovery over the simulated Socrata endpoint, and LADBS failure pages -> typed errors."""

from __future__ import annotations

import dataclasses
from datetime import date, timedelta

import pytest

from permitapi.portalsim.soql import haversine_m
from permitapi.portalsim.store import Fault, FaultMode
from permitapi.sources.base import (
    Blocked,
    NotFoundAtSource,
    PermitSnapshot,
    RetryLater,
    SearchCriteria,
)
from permitapi.sources.ladbs.socrata import METRES_PER_MILE
from tests.sources.ladbs.conftest import TODAY, LadbsSim


def _building(sim: LadbsSim) -> list[PermitSnapshot]:
    """The permits gwh9-jnip carries (Building group: they have coordinates)."""
    return [p for p in sim.store.of("ladbs") if p.latitude is not None]


async def test_date_range_newest_first_and_paging(sim: LadbsSim) -> None:
    start, end = date(2024, 1, 1), date(2025, 6, 30)
    expected = sorted(
        (p for p in _building(sim) if p.issued_date and start <= p.issued_date <= end),
        key=lambda p: p.issued_date or date.min,
        reverse=True,
    )
    assert len(expected) > 25
    seen: list[str] = []
    offset = 0
    while True:
        criteria = SearchCriteria(date_from=start, date_to=end, limit=10, offset=offset)
        page = await sim.adapter.search(sim.jurisdiction, criteria)
        seen += [h.permit_number for h in page.hits]
        dates = [h.issued_date or date.min for h in page.hits]
        assert dates == sorted(dates, reverse=True)
        if not page.has_more:
            break
        assert len(page.hits) == 10
        offset += 10
    assert len(seen) == len(set(seen)) == len(expected)
    assert {n for n in seen} == {p.permit_number for p in expected}
    got_dates = [sim.store.get("ladbs", n).issued_date for n in seen]  # type: ignore[union-attr]
    assert got_dates == [p.issued_date for p in expected]


async def test_radius_returns_only_permits_inside_the_circle(sim: LadbsSim) -> None:
    lat, lon, miles = 34.0522, -118.2437, 4.0
    criteria = SearchCriteria(latitude=lat, longitude=lon, radius_mi=miles, limit=500)
    page = await sim.adapter.search(sim.jurisdiction, criteria)
    limit_m = miles * METRES_PER_MILE
    inside = {
        p.permit_number
        for p in _building(sim)
        if haversine_m(p.latitude or 0, p.longitude or 0, lat, lon) <= limit_m
    }
    assert inside  # the circle holds some permits, not all of them
    assert len(inside) < len(_building(sim))
    assert {h.permit_number for h in page.hits} == inside
    for hit in page.hits:
        assert haversine_m(hit.latitude or 0, hit.longitude or 0, lat, lon) <= limit_m


async def test_parcel_zip_type_value_and_status_filters(sim: LadbsSim) -> None:
    permits = _building(sim)
    target = permits[0]
    assert target.parcel is not None
    assert target.address is not None
    dashed = f"{target.parcel[:4]}-{target.parcel[4:7]}-{target.parcel[7:]}"
    page = await sim.adapter.search(sim.jurisdiction, SearchCriteria(parcels=(dashed,)))
    assert [h.permit_number for h in page.hits] == [target.permit_number]
    hit = page.hits[0]
    assert (hit.address, hit.status, hit.valuation) == (
        target.address,
        target.raw_status,
        target.valuation,
    )
    assert (hit.applied_date, hit.issued_date) == (target.applied_date, target.issued_date)

    zip_code = target.address.rsplit(" ", 1)[1]
    criteria = SearchCriteria(
        zip=zip_code, permit_type="bldg-alter/repair", value_min=5000, value_max=600000, limit=500
    )
    page = await sim.adapter.search(sim.jurisdiction, criteria)
    expected = {
        p.permit_number
        for p in permits
        if (p.address or "").endswith(zip_code)
        and p.permit_type == "Bldg-Alter/Repair"
        and 5000 <= (p.valuation or 0) <= 600000
    }
    assert {h.permit_number for h in page.hits} == expected
    # numeric, not lexical: as text "85000" > "600000"
    assert all(5000 <= (h.valuation or 0) <= 600000 for h in page.hits)

    page = await sim.adapter.search(sim.jurisdiction, SearchCriteria(status="expired", limit=500))
    assert page.hits
    assert {h.permit_number for h in page.hits} == {
        p.permit_number for p in permits if p.raw_status in ("Permit Expired", "PC Expired")
    }
    page = await sim.adapter.search(sim.jurisdiction, SearchCriteria(status="pc approved"))
    assert page.hits
    assert {h.status for h in page.hits} == {"PC Approved"}


async def test_freshness_ignores_future_issue_dates(sim: LadbsSim) -> None:
    building = _building(sim)
    newest = max(p.issued_date for p in building if p.issued_date)
    future = dataclasses.replace(
        building[1], permit_number="26010-20000-99999", issued_date=TODAY + timedelta(days=40)
    )
    sim.store.put(future)  # a data-entry error: issued next month
    page = await sim.adapter.search(sim.jurisdiction, SearchCriteria(zip="90034", limit=5))
    freshness = page.freshness
    assert freshness is not None
    assert freshness.newest_issue_date == newest
    assert freshness.requested_through == TODAY
    assert freshness.lag_days == (TODAY - newest).days
    assert freshness.reliability == ("operational" if freshness.lag_days <= 5 else "degraded")


async def test_unknown_permit_is_not_found(sim: LadbsSim) -> None:
    with pytest.raises(NotFoundAtSource):
        await sim.adapter.fetch_permit(sim.jurisdiction, "26010-20000-99998")
    with pytest.raises(NotFoundAtSource):
        await sim.adapter.fetch_permit(sim.jurisdiction, "not a number")


async def test_maintenance_page_is_retry_later(sim: LadbsSim) -> None:
    number = sim.store.of("ladbs")[0].permit_number
    sim.store.add_fault(Fault("ladbs", "maintenance"))
    with pytest.raises(RetryLater) as caught:
        await sim.adapter.fetch_permit(sim.jurisdiction, number)
    assert caught.value.reason == "maintenance"
    with pytest.raises(RetryLater) as caught:
        await sim.adapter.search(sim.jurisdiction, SearchCriteria(zip="90034"))
    assert caught.value.reason == "maintenance"
    assert not (await sim.adapter.health(sim.jurisdiction)).ok
    sim.store.clear_faults()
    assert (await sim.adapter.health(sim.jurisdiction)).ok


@pytest.mark.parametrize(("mode", "reason"), [("down", "down"), ("error", "server_error")])
async def test_outages_are_retry_later(sim: LadbsSim, mode: FaultMode, reason: str) -> None:
    sim.store.add_fault(Fault("ladbs", mode))
    with pytest.raises(RetryLater) as caught:
        await sim.adapter.fetch_permit(sim.jurisdiction, sim.store.of("ladbs")[0].permit_number)
    assert caught.value.reason == reason


async def test_blocked_is_blocked_and_socrata_throttling_is_retry_later(sim: LadbsSim) -> None:
    sim.store.add_fault(Fault("ladbs", "blocked"))
    with pytest.raises(Blocked):
        await sim.adapter.fetch_permit(sim.jurisdiction, sim.store.of("ladbs")[0].permit_number)
    with pytest.raises(RetryLater) as caught:
        await sim.adapter.search(sim.jurisdiction, SearchCriteria(zip="90034"))
    assert caught.value.reason == "throttled"


async def test_enrichment_outage_leaves_socrata_fields_not_observed(sim: LadbsSim) -> None:
    permit = next(p for p in _building(sim) if p.valuation is not None)
    sim.store.add_fault(Fault("ladbs", "down", remaining=2))
    sim.store.add_fault(Fault("ladbs", "slow", latency_ms=0, remaining=1))  # PCIS goes through
    snapshot = await sim.adapter.fetch_permit(sim.jurisdiction, permit.permit_number)
    assert snapshot.raw_status == permit.raw_status
    assert snapshot.valuation is None
    assert "valuation" not in snapshot.field_sources
