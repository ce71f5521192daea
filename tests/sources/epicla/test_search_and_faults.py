"""EPIC-LA discovery, freshness, health and fault handling against the simulator."""

from __future__ import annotations

import dataclasses
import math
from datetime import date
from types import MappingProxyType

import pytest

from permitapi.portalsim.epicla import wire
from permitapi.portalsim.store import Fault
from permitapi.sources.base import (
    Blocked,
    NotFoundAtSource,
    PermitSnapshot,
    PortalChanged,
    RetryLater,
    SearchCriteria,
)
from permitapi.sources.epicla.arcgis import parse_query_page
from tests.sources.epicla.sim import TODAY, Sim, build


@pytest.fixture(scope="module")
def sim() -> Sim:
    return build(count=300, seed=99)


@pytest.fixture(autouse=True)
def _no_faults(sim: Sim) -> None:
    sim.store.clear_faults()


def order_key(p: PermitSnapshot) -> tuple[bool, date]:
    return (p.issued_date is not None, p.issued_date or date.min)


async def search_all(sim: Sim, criteria: SearchCriteria) -> list[str]:
    page = await sim.adapter.search(sim.jurisdiction, criteria)
    assert not page.has_more, "use a limit large enough for the whole result"
    return [hit.permit_number for hit in page.hits]


async def test_parcels(sim: Sim) -> None:
    chosen = sim.store.of("epicla")[:3]
    criteria = SearchCriteria(parcels=tuple(p.parcel or "" for p in chosen), limit=100)
    found = await search_all(sim, criteria)
    expected = {p.permit_number for p in sim.store.of("epicla") if p.parcel in criteria.parcels}
    assert set(found) == expected
    assert len(found) >= 3


async def test_issue_date_range_is_inclusive(sim: Sim) -> None:
    issued = sorted(p.issued_date for p in sim.store.of("epicla") if p.issued_date)
    start, end = issued[len(issued) // 4], issued[len(issued) // 2]
    found = await search_all(sim, SearchCriteria(date_from=start, date_to=end, limit=500))
    truth = [p for p in sim.store.of("epicla") if p.issued_date and start <= p.issued_date <= end]
    assert set(found) == {p.permit_number for p in truth}
    # The boundary days themselves are included (08:00 UTC rows vs 00:00 UTC literals).
    assert {p.permit_number for p in truth if p.issued_date in (start, end)} <= set(found)
    # Newest issue first.
    by_number = {p.permit_number: p for p in truth}
    dates = [by_number[n].issued_date for n in found]
    assert dates == sorted(dates, reverse=True)


async def test_radius_returns_only_points_inside_the_circle(sim: Sim) -> None:
    lat, lon, miles = 34.1897, -118.1312, 2.0  # Altadena
    page = await sim.adapter.search(
        sim.jurisdiction, SearchCriteria(latitude=lat, longitude=lon, radius_mi=miles, limit=500)
    )

    def miles_from_center(p_lat: float, p_lon: float) -> float:
        dlat, dlon = math.radians(p_lat - lat), math.radians(p_lon - lon)
        h = (
            math.sin(dlat / 2) ** 2
            + math.cos(math.radians(lat)) * math.cos(math.radians(p_lat)) * math.sin(dlon / 2) ** 2
        )
        return 2 * 3958.7613 * math.asin(math.sqrt(h))

    inside = {
        p.permit_number
        for p in sim.store.of("epicla")
        if p.latitude and p.longitude and miles_from_center(p.latitude, p.longitude) <= miles
    }
    assert inside
    assert {hit.permit_number for hit in page.hits} == inside
    for hit in page.hits:
        assert hit.latitude is not None
        assert hit.longitude is not None
        assert miles_from_center(hit.latitude, hit.longitude) <= miles


async def test_paging_follows_exceeded_transfer_limit(sim: Sim) -> None:
    criteria = SearchCriteria(value_min=100_000, limit=17)
    collected: list[str] = []
    pages = 0
    while True:
        page = await sim.adapter.search(
            sim.jurisdiction, dataclasses.replace(criteria, offset=len(collected))
        )
        collected += [hit.permit_number for hit in page.hits]
        pages += 1
        if not page.has_more:
            break
        assert len(page.hits) == 17
    expected = sorted(
        (p for p in sim.store.of("epicla") if p.valuation is not None and p.valuation >= 100_000),
        key=order_key,
        reverse=True,
    )
    assert len(collected) == len(set(collected)) == len(expected)
    assert set(collected) == {p.permit_number for p in expected}
    assert pages == math.ceil(len(expected) / 17)


async def test_type_zip_value_and_status_filters(sim: Sim) -> None:
    permits = sim.store.of("epicla")
    electrical = await search_all(sim, SearchCriteria(permit_type="Electrical", limit=500))
    assert set(electrical) == {
        p.permit_number
        for p in permits
        if "Electrical" in (p.permit_type or "") or "Electrical" in wire.workclass(p)
    }
    assert electrical

    building = await search_all(sim, SearchCriteria(permit_type="Building", limit=500))
    assert set(building) == {
        p.permit_number
        for p in permits
        if "Building" in (p.permit_type or "") or "Rebuild" in wire.workclass(p)
    }
    assert {n[:4] for n in building} == {"UNC-", "CREB", "CREC"}

    in_zip = await search_all(sim, SearchCriteria(zip="91001", limit=500))
    assert set(in_zip) == {p.permit_number for p in permits if "91001" in (p.address or "")}

    valued = await search_all(sim, SearchCriteria(value_min=50_000, value_max=60_000, limit=500))
    assert set(valued) == {
        p.permit_number for p in permits if p.valuation and 50_000 <= p.valuation <= 60_000
    }

    finaled_raw = await search_all(sim, SearchCriteria(status="Finaled", limit=500))
    assert set(finaled_raw) == {p.permit_number for p in permits if p.raw_status == "Finaled"}
    expired = await search_all(sim, SearchCriteria(status="expired", limit=500))
    assert set(expired) == {p.permit_number for p in permits if p.raw_status == "Expired"}


async def test_freshness_ignores_future_outliers(sim: Sim) -> None:
    issued = [p.issued_date for p in sim.store.of("epicla") if p.issued_date]
    assert max(issued) > TODAY  # the outlier is in the data
    page = await sim.adapter.search(sim.jurisdiction, SearchCriteria(zip="91001"))
    assert page.freshness is not None
    newest = max(d for d in issued if d <= TODAY)
    assert page.freshness.newest_issue_date == newest
    assert page.freshness.requested_through == TODAY
    assert page.freshness.lag_days == (TODAY - newest).days
    assert page.warnings == []


async def test_health_counts_the_layer(sim: Sim) -> None:
    probe = await sim.adapter.health(sim.jurisdiction)
    assert probe.ok
    assert probe.detail.startswith(f"{len(sim.store.of('epicla'))} cases")


async def test_unknown_case_is_not_found(sim: Sim) -> None:
    with pytest.raises(NotFoundAtSource):
        await sim.adapter.fetch_permit(sim.jurisdiction, "UNC-BLDR991231000001")


@pytest.mark.parametrize(
    ("mode", "error", "reason"),
    [
        ("maintenance", RetryLater, "maintenance"),
        ("error", RetryLater, "server_error"),
        ("down", RetryLater, "down"),
        ("timeout", RetryLater, "timeout"),
        ("blocked", Blocked, None),
    ],
)
async def test_faults_are_typed(
    sim: Sim, mode: str, error: type[Exception], reason: str | None
) -> None:
    number = sim.store.of("epicla")[5].permit_number
    # A short stall: a timeout fault without one waits the simulator's 60 s default.
    sim.store.add_fault(Fault(source="epicla", mode=mode, latency_ms=10))  # type: ignore[arg-type]
    with pytest.raises(error) as raised:
        await sim.adapter.fetch_permit(sim.jurisdiction, number)
    if reason is not None:
        assert isinstance(raised.value, RetryLater)
        assert raised.value.reason == reason
    with pytest.raises(error):
        await sim.adapter.search(sim.jurisdiction, SearchCriteria(zip="91001"))
    probe = await sim.adapter.health(sim.jurisdiction)
    assert not probe.ok


async def test_slow_fault_still_answers(sim: Sim) -> None:
    truth = sim.store.of("epicla")[3]
    sim.store.add_fault(Fault(source="epicla", mode="slow", latency_ms=20))
    got = await sim.adapter.fetch_permit(sim.jurisdiction, truth.permit_number)
    assert got.raw_status == truth.raw_status


async def test_missing_energov_never_fails_the_lookup(sim: Sim) -> None:
    truth = next(p for p in sim.store.of("epicla") if p.workflow is not None)
    elsewhere = dataclasses.replace(
        sim.jurisdiction,
        endpoints=MappingProxyType(
            {**sim.jurisdiction.endpoints, "energov": "https://epicla.lacounty.gov/gone"}
        ),
    )
    got = await sim.adapter.fetch_permit(elsewhere, truth.permit_number)
    assert got.status is truth.status
    assert got.issued_date == truth.issued_date
    assert got.workflow is None
    assert got.inspections is None
    assert got.pending_inspections is None


async def test_energov_requires_tenant_header(sim: Sim) -> None:
    truth = next(p for p in sim.store.of("epicla") if p.workflow is not None)
    url = "/epicla.lacounty.gov/energov_prod/SelfService/api/energov/search/search"
    body = {"PermitCriteria": {"PermitNumber": truth.permit_number}}
    async with sim.client as client:
        refused = await client.post(url, json=body)
        answered = await client.post(url, json=body, headers={"tenantId": "1"})
        case = answered.json()["Result"]["EntityResults"][0]
        workflow = await client.get(
            f"/epicla.lacounty.gov/energov_prod/SelfService/api/energov/case/{case['CaseId']}/workflow",
            headers={"tenantId": "1"},
        )
    assert refused.status_code == 500
    assert answered.status_code == 200
    assert case["CaseNumber"] == truth.permit_number
    assert len(workflow.json()["Result"]["WorkflowActivities"]) == len(truth.workflow or [])


async def test_invalid_field_answers_the_arcgis_envelope(sim: Sim) -> None:
    path = (
        "/services.arcgis.com/RmCCgQtiZLDCtblq/arcgis/rest/services/"
        "EPIC-LA_Case_History_view/FeatureServer/0/query"
    )
    async with sim.client as client:
        bad_field = await client.get(path, params={"where": "NO_SUCH_FIELD=1", "f": "json"})
        bad_out = await client.get(path, params={"where": "1=1", "outFields": "NOPE", "f": "json"})
        bad_syntax = await client.post(path, data={"where": "STATUS = = 'x'", "f": "json"})
    assert bad_field.status_code == 200
    assert bad_field.json()["error"]["code"] == 400
    assert bad_field.json()["error"]["details"] == [
        "'Invalid field: NO_SUCH_FIELD' parameter is invalid"
    ]
    assert bad_out.json()["error"]["details"] == ["'Invalid field: NOPE' parameter is invalid"]
    assert bad_syntax.json()["error"]["details"] == ["'where' parameter is invalid"]
    with pytest.raises(PortalChanged):
        parse_query_page(bad_field.json())
