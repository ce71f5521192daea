"""ACA parsers on hand-written fixtures for the shapes with no real sample (see each header)."""

from __future__ import annotations

from datetime import date
from pathlib import Path

import pytest

from permitapi.sources.aca.detail import parse_detail
from permitapi.sources.aca.inspections import InspectionListError, parse_inspections
from permitapi.sources.aca.pages import PageKind, classify, parse_form
from permitapi.sources.aca.processing import (
    ProcessingDataError,
    fragment_from_json,
    parse_processing,
)
from permitapi.sources.aca.results import CapId
from permitapi.sources.aca.snapshot import Provenance, build_snapshot
from permitapi.sources.aca.status import classify_inspection_result, table_for
from permitapi.sources.base import NormalizedStatus

FIXTURES = Path(__file__).parents[2] / "fixtures" / "aca"


def fixture(name: str) -> str:
    return (FIXTURES / name).read_text(encoding="utf-8")


def test_building_capdetail_record_details_and_more_details() -> None:
    html = fixture("capdetail_building_more-details_HANDWRITTEN.html")
    assert classify(html) is PageKind.DETAIL
    form = parse_form(html)
    assert form is not None
    assert form.missing() == []
    detail = parse_detail(html)
    assert detail is not None
    assert detail.cap_id == CapId("24BLD", "00000", "001AA")  # params in another order
    assert (detail.permit_number, detail.status) == ("BLD24-01234", "Issued")
    assert detail.record_type == "Building/Residential/New/NA"
    assert detail.address == "200 S ANAHEIM BLVD, ANAHEIM CA 92805"
    assert detail.job_value == 412500.0
    assert detail.more_details == {"Number of Stories": "2", "Occupancy Group": "R-3"}
    assert (detail.parcel, detail.block, detail.lot) == ("035-123-45", None, "12")
    assert detail.subdivision == "TRACT 4411"
    assert detail.description == "NEW 2-STORY SFD WITH ATTACHED GARAGE"
    assert detail.applicant == ["JANE OWNER", "200 S ANAHEIM BLVD", "ANAHEIM CA 92805"]
    assert detail.licensed_professional == [
        "JOHN BUILDER",
        "BUILDER & SONS INC",
        "GENERAL CONTRACTOR 123456",
    ]
    assert [(c.name, c.status, c.group, c.status_date) for c in detail.conditions] == [
        ("Fire Sprinkler Plan Approval", "Applied", "Fire", date(2024, 2, 14)),
        ("School Fees Paid", "Met", "Building", None),
    ]


def test_inspections_section() -> None:
    lists = parse_inspections(fixture("capdetail_building_more-details_HANDWRITTEN.html"))
    assert lists is not None
    assert [(i.type, i.status, i.date) for i in lists.upcoming] == [
        ("Rough Framing", "Scheduled", date(2024, 3, 4)),
        ("Insulation", "Pending", None),
    ]
    first, second = lists.completed
    # A type may itself contain parentheses: the id is the last "(...)" before " - ".
    assert (first.type, first.inspection_id) == ("Footing (Setbacks)", "10293801")
    assert (first.status, first.date, first.inspector) == (
        "Corrections Required",
        date(2024, 2, 20),
        "R. Alvarez",
    )
    assert (second.type, second.status, second.inspector) == ("Underground Plumbing", "Pass", None)


def test_empty_and_unreadable_inspection_lists() -> None:
    empty = (
        '<div id="ctl00_PlaceHolderMain_InspectionList"><div id="x_InspectionList_completed">'
        "<span>There are no completed inspections on this record.</span></div></div>"
    )
    lists = parse_inspections(empty)
    assert lists is not None
    assert (lists.upcoming, lists.completed) == ([], [])
    assert parse_inspections("<html><body>no section</body></html>") is None
    broken = empty.replace(
        "<span>There",
        '<div class="ACA_Inspection_Item"><span class="ACA_Inspection_Title">Framing</span>'
        "</div><span>There",
    )
    with pytest.raises(InspectionListError):
        parse_inspections(broken)


def test_processing_fragment_tasks_events_and_odd_keys() -> None:
    tasks = parse_processing(fragment_from_json(fixture("getprocessingdata_HANDWRITTEN.json")))
    names = [t.name for t in tasks]
    assert names == [
        "Application Submittal",
        "Plan Review",
        "Fire Review",
        "Document Submittal",
        "Permit Issuance",
        "Inspections",
    ]
    intake = tasks[0]
    # "Marked as&nbsp; " and "  &nbsp;on " still read as the two keys.
    assert [(e.status, e.on, e.by) for e in intake.events] == [
        ("Accepted", date(2024, 1, 5), "M. Lopez")
    ]
    plan, fire = tasks[1], tasks[2]
    assert [e.status for e in plan.events] == ["In Review", "Approved"]  # not Fire's event
    assert fire.parent == "Plan Review"
    assert (fire.status, fire.completed_at) == ("Approved", date(2024, 1, 30))
    assert tasks[3].events[0].on is None  # TBD
    assert tasks[3].completed_at is None
    inspections = tasks[5]
    assert (inspections.state, inspections.status) == ("in_progress", "In Progress")
    assert inspections.assigned_to == "Building Division"
    assert inspections.due_on == date(2025, 8, 6)


def test_processing_envelope_errors() -> None:
    assert fragment_from_json(b'{"d": null}') == ""
    assert parse_processing("") == []
    for bad in (b"<html>", b'{"x": 1}', b'{"d": 3}'):
        with pytest.raises(ProcessingDataError):
            fragment_from_json(bad)


def test_snapshot_dates_from_the_workflow() -> None:
    detail = parse_detail(fixture("capdetail_building_more-details_HANDWRITTEN.html"))
    assert detail is not None
    tasks = parse_processing(fragment_from_json(fixture("getprocessingdata_HANDWRITTEN.json")))
    lists = parse_inspections(fixture("capdetail_building_more-details_HANDWRITTEN.html"))
    where = Provenance("https://h/A/Cap/CapHome.aspx", "https://h/A/Cap/CapDetail.aspx?x",
                       "https://h/A/Cap/CapDetail.aspx/GetProcessingData", None)  # fmt: skip
    snap = build_snapshot("aca:anaheim", detail, None, tasks, lists, where)
    assert snap.status is NormalizedStatus.ISSUED
    assert snap.applied_date == date(2024, 1, 5)  # no grid: the earliest event
    assert snap.issued_date == date(2024, 2, 6)  # "Issued" in Permit Issuance
    assert snap.status_date == date(2024, 2, 6)
    assert snap.finaled_date is None
    assert snap.expires_date is None
    assert snap.valuation == 412500.0
    timeline = snap.timeline or []
    assert timeline[-1].changed_at is None  # TBD last
    assert timeline[0].discipline == "Application Submittal"
    conditions = snap.conditions or []
    assert [c.is_met for c in conditions] == [False, True]
    assert snap.inspections is not None
    assert [i.result for i in snap.inspections] == ["Corrections Required", "Pass"]
    assert snap.pending_inspections is not None
    assert len(snap.pending_inspections) == 2
    # inspections_url None: no provenance claimed for inspections
    assert "inspections" not in snap.field_sources


@pytest.mark.parametrize(
    ("name", "kind"),
    [
        ("error_aspx_HANDWRITTEN.html", PageKind.ERROR),
        ("csrf_refusal_HANDWRITTEN.html", PageKind.CSRF),
    ],
)
def test_error_and_csrf_pages(name: str, kind: PageKind) -> None:
    assert classify(fixture(name)) is kind


def test_status_overrides_and_inspection_outcomes() -> None:
    assert table_for("aca:anaheim").normalize("Approved") is NormalizedStatus.APPROVED_PENDING_ISSUE
    assert table_for("aca:sbc").normalize("Part 1 Approved") is NormalizedStatus.IN_REVIEW
    assert table_for("aca:sacramento").normalize("Approved") is NormalizedStatus.ISSUED
    assert (
        table_for("aca:sacramento").normalize(" closed-CO\xa0issued ") is NormalizedStatus.OCCUPANCY
    )
    assert (
        table_for("aca:kingco").normalize("Case Opened with Violation Ltr")
        is NormalizedStatus.UNKNOWN
    )
    assert classify_inspection_result("Pass") == "pass"
    assert classify_inspection_result("No Violations - Pass") == "pass"
    assert classify_inspection_result("Corrections Required") == "fail"
    assert classify_inspection_result("Cancelled") == "other"
    assert classify_inspection_result(None) == "other"
