"""The record page as ACA serves it, through the simulator: inspections only by the UpdatePanel
postback (paged five at a time), the agency's own parcel and value labels in either custom-field
layout, and the header's expiry."""

from __future__ import annotations

import dataclasses
from datetime import date, timedelta

import httpx
import pytest
from starlette.applications import Starlette
from starlette.types import Receive, Scope, Send

from permitapi.portalsim.aca.numbers import cap_id_of
from permitapi.portalsim.aca.render import detail_href
from permitapi.portalsim.store import SimStore
from permitapi.sources.aca import adapter as aca_adapter
from permitapi.sources.aca.adapter import AcaAdapter
from permitapi.sources.aca.inspections import parse_inspections
from permitapi.sources.aca.pages import parse_form
from permitapi.sources.base import Inspection, NormalizedStatus, PendingInspection, PermitSnapshot
from permitapi.sources.registry import Directory, Jurisdiction
from tests.sources.aca.conftest import SIM_BASE
from tests.support.portal_http import in_process_http


def _agency(directory: Directory, slug: str) -> Jurisdiction:
    jurisdiction = directory.get(slug)
    assert jurisdiction is not None
    return jurisdiction


def _florida_permit(completed: int) -> PermitSnapshot:
    inspections = [
        Inspection(
            f"BLD-Inspection {n}", date(2026, 3, 1) + timedelta(days=n), "Approved", "J. Ortiz"
        )
        for n in range(completed)
    ]
    inspections[0] = Inspection("PLB-Final", date(2026, 9, 14), "Approved", "Maria Delgado")
    return PermitSnapshot(
        jurisdiction="aca:hcfl",
        permit_number="BLD25-012345",
        raw_status="Issued",
        status=NormalizedStatus.ISSUED,
        permit_type="Building/Residential/Alteration/NA",
        address="4702 N FLORIDA AVE, TAMPA FL 33603",
        applied_date=date(2025, 12, 1),
        issued_date=date(2026, 1, 20),
        expires_date=date(2027, 1, 20),
        valuation=48250.0,
        parcel="1918870000",
        inspections=inspections,
        pending_inspections=[PendingInspection("BLD-Final", date(2026, 12, 3))],
        conditions=[],
        timeline=[],
        workflow=[],
    )


def _detail_url(directory: Directory, permit: PermitSnapshot) -> str:
    jurisdiction = _agency(directory, permit.jurisdiction)
    base = (jurisdiction.endpoints.get("aca") or jurisdiction.portal_base_url).rstrip("/")
    host_and_path = base.removeprefix("https://")
    code = jurisdiction.agency_code or ""
    href = detail_href("", jurisdiction.module or "Building", code, cap_id_of(permit))
    return f"{SIM_BASE}/{host_and_path}{href}"


async def test_a_florida_record_reads_its_folio_value_expiry_and_every_inspection_page(
    adapter: AcaAdapter, store: SimStore, directory: Directory, sim_app: Starlette
) -> None:
    truth = _florida_permit(completed=7)  # two pages of the completed grid
    store.put(truth)
    before = store.requests["aca:hcfl"]
    got = await adapter.fetch_permit(_agency(directory, "aca:hcfl"), "BLD25-012345")
    assert got.parcel == "1918870000"
    assert got.valuation == 48250.0
    assert got.expires_date == date(2027, 1, 20)
    assert got.field_sources["expires_date"] == got.source_url
    assert got.inspections == truth.inspections
    assert got.inspections is not None
    assert got.inspections[0] == Inspection(
        "PLB-Final", date(2026, 9, 14), "Approved", "Maria Delgado"
    )
    assert got.pending_inspections == [PendingInspection("BLD-Final", date(2026, 12, 3))]
    # CapHome, the search (one match: redirect), CapDetail, GetProcessingData, the refresh
    # postback and one "Next >" postback for the second page of completed inspections.
    assert store.requests["aca:hcfl"] - before == 7


async def test_the_served_page_has_the_agency_labels_and_no_inspections_before_the_postback(
    store: SimStore, directory: Directory, sim_app: Starlette
) -> None:
    truth = _florida_permit(completed=3)
    store.put(truth)
    transport = httpx.ASGITransport(app=sim_app)
    async with httpx.AsyncClient(transport=transport) as client:
        page = (await client.get(_detail_url(directory, truth))).text
    assert "Folio Number:1918870000" in page
    assert "ASIReview2Columns" in page
    assert "Total Project Value:" in page
    assert "MoreDetail_ItemCol1" not in page
    assert "Expiration Date:" in page
    assert "01/20/2027" in page
    assert "LoadInitInspectionList()" in page
    lists = parse_inspections(page)
    assert lists is not None
    assert not lists.loaded
    assert lists.completed == []
    assert lists.upcoming == []
    assert "PLB-Final" not in page


async def test_a_california_agency_keeps_the_more_details_layout(
    adapter: AcaAdapter, store: SimStore, directory: Directory
) -> None:
    truth = dataclasses.replace(
        _florida_permit(completed=2), jurisdiction="aca:anaheim", permit_number="BLD2025-01234"
    )
    store.put(truth)
    got = await adapter.fetch_permit(_agency(directory, "aca:anaheim"), truth.permit_number)
    assert (got.parcel, got.valuation, got.expires_date) == (
        "1918870000",
        48250.0,
        date(2027, 1, 20),
    )
    assert got.inspections == truth.inspections


async def test_completed_pages_stop_at_the_politeness_budget(
    adapter: AcaAdapter, store: SimStore, directory: Directory
) -> None:
    truth = _florida_permit(completed=60)  # twelve pages of five
    store.put(truth)
    before = store.requests["aca:hcfl"]
    got = await adapter.fetch_permit(_agency(directory, "aca:hcfl"), truth.permit_number)
    budget = aca_adapter.MAX_INSPECTION_PAGES
    assert got.inspections == (truth.inspections or [])[: budget * 5]
    assert store.requests["aca:hcfl"] - before == 5 + budget


@pytest.mark.parametrize(
    ("headers", "form_change", "expected"),
    [
        ({}, {}, "302"),  # not an async postback: the full-page route redirects to Error.aspx
        ({"X-MicrosoftAjax": "Delta=true"}, {"__EVENTVALIDATION": "stale"}, "pageRedirect"),
        ({"X-MicrosoftAjax": "Delta=true"}, {"ctl00$ScriptManager1": "x|y"}, "error"),
        ({"X-MicrosoftAjax": "Delta=true"}, {}, "updatePanel"),
    ],
)
async def test_the_simulator_checks_the_postback_like_aca(
    store: SimStore,
    directory: Directory,
    sim_app: Starlette,
    headers: dict[str, str],
    form_change: dict[str, str],
    expected: str,
) -> None:
    truth = _florida_permit(completed=1)
    store.put(truth)
    url = _detail_url(directory, truth)
    real_origin = "https://" + url.removeprefix(SIM_BASE + "/").split("/", 1)[0]
    transport = httpx.ASGITransport(app=sim_app)
    async with httpx.AsyncClient(transport=transport) as client:
        page = await client.get(url)
        form = parse_form(page.text)
        assert form is not None
        data = dict(form.fields)
        data.update(
            {
                "ctl00$ScriptManager1": "ctl00$PlaceHolderMain$InspectionList$inspectionUpdatePanel"
                "|ctl00$PlaceHolderMain$InspectionList$btnRefreshGridView",
                "__EVENTTARGET": "ctl00$PlaceHolderMain$InspectionList$btnRefreshGridView",
                "__ASYNCPOST": "true",
                **form_change,
            }
        )
        answer = await client.post(
            url,
            data=data,
            headers={"Referer": real_origin + "/x", "Origin": real_origin, **headers},
        )
    if expected == "302":
        assert answer.status_code == 302
        assert "Error.aspx" in answer.headers["location"]
    else:
        assert f"|{expected}|" in answer.text


async def test_a_processing_status_that_cannot_be_had_leaves_history_unavailable_with_why(
    store: SimStore, directory: Directory, sim_app: Starlette
) -> None:
    """The agency's page method answers an ASP.NET error object instead of `{"d": …}` (as a
    tenant that switched the tab off does): the record is still reported, its history is not
    observed and says why, never an empty list."""

    async def processing_switched_off(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and scope["path"].endswith("/GetProcessingData"):
            body = b'{"Message":"Authentication failed.","StackTrace":null}'
            await send(
                {
                    "type": "http.response.start",
                    "status": 200,
                    "headers": [(b"content-type", b"application/json; charset=utf-8")],
                }
            )
            await send({"type": "http.response.body", "body": body})
            return
        await sim_app(scope, receive, send)

    truth = _florida_permit(completed=1)
    store.put(truth)
    http = in_process_http(processing_switched_off, SIM_BASE)
    try:
        got = await AcaAdapter(http).fetch_permit(_agency(directory, "aca:hcfl"), "BLD25-012345")
    finally:
        await http.aclose()
    assert got.raw_status == "Issued"
    assert got.inspections == truth.inspections
    assert got.timeline is None
    assert got.workflow is None
    assert "Processing Status request failed" in got.unavailable["timeline"]
    assert "'d'" in got.unavailable["timeline"]


async def test_the_daily_probe_sees_a_new_inspection_result_through_the_postback(
    adapter: AcaAdapter, store: SimStore, directory: Directory
) -> None:
    truth = _florida_permit(completed=2)
    store.put(truth)
    hcfl = _agency(directory, "aca:hcfl")
    got = await adapter.fetch_permit(hcfl, truth.permit_number)
    assert got.source_url is not None
    before = await adapter.probe_signature(hcfl, truth.permit_number, got.source_url)
    assert await adapter.probe_signature(hcfl, truth.permit_number, got.source_url) == before
    newer = Inspection("BLD-Final", date(2026, 10, 1), "Disapproved", "J. Ortiz")
    store.put(dataclasses.replace(truth, inspections=[newer, *(truth.inspections or [])]))
    requests = store.requests["aca:hcfl"]
    after = await adapter.probe_signature(hcfl, truth.permit_number, got.source_url)
    assert after != before
    assert "Disapproved" in after
    assert store.requests["aca:hcfl"] - requests == 2  # the page and its inspection postback
