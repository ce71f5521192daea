"""The record page shapes of issue 20 on hand-written fixtures (no real capture of them was
found; each fixture says so): the tabbed layout with "Folio Number", "Total Project Value" in
ASIReview2Columns, the header expiry, and the inspection lists that arrive by the UpdatePanel
postback as a partial-rendering delta. Expected values are the ones a person reads on the page."""

from __future__ import annotations

from datetime import date, time
from pathlib import Path

import pytest

from permitapi.sources.aca.detail import parse_detail
from permitapi.sources.aca.inspections import (
    PANEL_ID,
    InspectionItem,
    parse_inspections,
    parse_panel_fragment,
)
from permitapi.sources.aca.pages import DeltaError, parse_delta, parse_form

FIXTURES = Path(__file__).parents[2] / "fixtures" / "aca"
PAGE = "capdetail_florida-county_tabbed-folio_HANDWRITTEN.html"


def fixture(name: str) -> str:
    return (FIXTURES / name).read_text(encoding="utf-8")


def test_the_tabbed_florida_page_reads_folio_value_and_expiry() -> None:
    detail = parse_detail(fixture(PAGE))
    assert detail is not None
    assert detail.permit_number == "BR-2025-004817"
    assert detail.status == "Finaled"
    assert detail.parcel == "232815000000012345"
    assert (detail.block, detail.lot) == (None, None)
    assert detail.job_value == 18450.0
    assert detail.expires == date(2027, 3, 14)
    assert detail.more_details == {"Number of Stories": "1", "Roof Covering": "Shingle"}
    assert detail.address == "1207 W PALM DR, LAKELAND FL 33803"


def test_the_page_as_served_has_no_inspections_yet() -> None:
    html = fixture(PAGE)
    lists = parse_inspections(html)
    assert lists is not None
    assert not lists.loaded
    form = parse_form(html)
    assert form is not None
    assert form.fields["__VIEWSTATE"] == "/wEPDwULLTE2MjQ"


def test_the_postback_delta_holds_the_completed_inspections_and_the_next_page() -> None:
    records = parse_delta(fixture("inspection-postback_delta_page-1_HANDWRITTEN.txt"))
    hidden = {r.id: r.content for r in records if r.kind == "hiddenField"}
    assert hidden["__VIEWSTATE"] == "/wEPDwULLTE2MjQ|page1"  # a "|" inside content is kept
    panel = next(r for r in records if r.kind == "updatePanel")
    assert panel.id == PANEL_ID
    lists = parse_panel_fragment(panel.content)
    assert lists.loaded
    assert lists.upcoming == []
    assert lists.completed[0] == InspectionItem(
        type="PLB-Final",
        inspection_id="7958165",
        status="Approved",
        date=date(2026, 9, 14),
        inspector="Maria Delgado",
        time=time(10, 32),
    )
    assert [i.status for i in lists.completed] == [
        "Approved", "Approved", "Disapproved", "Approved", "Cancelled",
    ]  # fmt: skip
    assert lists.completed[1].time == time(14, 5)
    cancelled = lists.completed[4]
    assert (cancelled.inspector, cancelled.date) == (None, date(2026, 7, 20))
    assert (
        lists.completed_next == "ctl00$PlaceHolderMain$InspectionList$gvListCompleted$ctl08$ctl03"
    )


def test_the_last_page_has_no_next_link() -> None:
    records = parse_delta(fixture("inspection-postback_delta_page-2_HANDWRITTEN.txt"))
    panel = next(r for r in records if r.kind == "updatePanel")
    lists = parse_panel_fragment(panel.content)
    assert [(i.type, i.inspection_id) for i in lists.completed] == [
        ("BLD-Permit Card Posted", "7871200")
    ]
    assert lists.completed_next is None


@pytest.mark.parametrize(
    "text",
    [
        "<html><body>An error has occurred.</body></html>",  # a full page, not a delta
        "5|updatePanel|p|abc|",  # content shorter than its length
        "x|updatePanel|p|abc|",  # length not a number
    ],
)
def test_what_is_not_a_delta_is_refused(text: str) -> None:
    with pytest.raises(DeltaError):
        parse_delta(text)
