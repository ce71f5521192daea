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


def _page(body: str) -> str:
    return (
        '<html><body><form id="aspnetForm" action="./CapDetail.aspx?capID1=26BLD&amp;capID2=00000'
        '&amp;capID3=00A1B"><span id="ctl00_PlaceHolderMain_lblPermitNumber">BLD26-00793</span>'
        f'<span id="ctl00_PlaceHolderMain_lblRecordStatus">Issued</span>{body}</form></body></html>'
    )


@pytest.mark.parametrize(
    ("label", "value"),
    [("APN", "4104-001-035"), ("PIN", "9648-12-3456"), ("Parcel No.", "123 456 78"),
     ("Folio Number", "0131230000010"), ("Parcel Number", "1626069072")],
)  # fmt: skip
def test_every_parcel_label_names_the_parcel(label: str, value: str) -> None:
    detail = parse_detail(
        _page(
            '<div id="ctl00_PlaceHolderMain_PermitDetailList1_palParceList"><div>'
            f'<div class="MoreDetail_ItemCol MoreDetail_ItemCol2">{label}:{value}</div>'
            '<div class="ACA_SmLabel">Lot:--</div></div></div>'
        )
    )
    assert detail is not None
    assert detail.parcel == value
    assert detail.lot is None


def test_a_folio_printed_in_the_work_location_is_the_parcel_not_an_address_line() -> None:
    detail = parse_detail(
        _page(
            '<table id="tbl_worklocation"><tr><td>58 Bahama Cir<br/>FOLIO: 194912.0000<br/>'
            "STRAP: 182925509000</td></tr></table>"
        )
    )
    assert detail is not None
    assert detail.address == "58 Bahama Cir"
    assert detail.parcel == "194912.0000"


@pytest.mark.parametrize(
    ("label", "shown", "value"),
    [("Valuation", "$1,250,000.00", 1250000.0), ("Estimated Cost", "4,800", 4800.0),
     ("Construction Valuation", "$96,500.50", 96500.5), ("Job Value($)", "12000", 12000.0)],
)  # fmt: skip
def test_every_value_label_in_the_more_details_layout(label: str, shown: str, value: float) -> None:
    detail = parse_detail(
        _page(
            '<tr id="TRMoreDetail"><td><div class="MoreDetail_ItemCol MoreDetail_ItemCol1">'
            f'<span>{label}:</span></div><div class="MoreDetail_ItemCol MoreDetail_ItemCol2">'
            f"<span>{shown}</span></div></td></tr>"
        )
    )
    assert detail is not None
    assert detail.job_value == value


@pytest.mark.parametrize(
    "header",
    [
        '<span id="ctl00_PlaceHolderMain_lblExpirtionDate">01/31/2026</span>',  # ACA's spelling
        "<div>Expiration Date: 01/31/2026</div>",  # only the text
    ],
)
def test_the_header_expiry_in_both_forms(header: str) -> None:
    detail = parse_detail(_page(header))
    assert detail is not None
    assert detail.expires == date(2026, 1, 31)
