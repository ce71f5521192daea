"""ACA parsers on the real pages in tests/fixtures/aca (origins in its README): six King County
pages, a Hillsborough County (FL) record page in the tabbed layout, Berkeley's search form and
Error.aspx, and Mecklenburg County's (NC) answers to the inspection postbacks."""

from __future__ import annotations

from datetime import date, time

import pytest

from permitapi.sources.aca.detail import parse_detail
from permitapi.sources.aca.inspections import (
    ANSWER_PANEL_IDS,
    COMPLETED_PANEL_ID,
    PANEL_ID,
    InspectionItem,
    parse_inspections,
    parse_panel_fragment,
)
from permitapi.sources.aca.pages import (
    PERMIT_NUMBER_FIELD,
    PageKind,
    classify,
    html_tree,
    parse_delta,
    parse_form,
)
from permitapi.sources.aca.results import CapId, cap_id_from_url, parse_results
from tests.support.samples import family_samples, samples_dir

SAMPLES = samples_dir() / "aca"
PAGE_1 = "kingco_caphome_enforce_search-results_page-1_showing-100-plus_trimmed.html"
PAGE_4 = "kingco_caphome_enforce_search-results_page-4-of-4_trimmed.html"
NO_RESULTS = "kingco_caphome_enforce_search-no-results_trimmed.html"
DETAIL_0938 = "kingco_capdetail_ENFR26-0938_intake-processing_parcel_trimmed.html"
DETAIL_0931 = "kingco_capdetail_ENFR26-0931_single-result-search-redirect_trimmed.html"
LOGIN = "kingco_login-redirect_angular-login-panel_trimmed.html"
HCFL = "hcfl_capdetail_HC-BTR-26-0338191_tabbed-folio-inspections-loaded_browser-dom_trimmed.html"
BERKELEY_ERROR = "berkeley_error-aspx_invalid-datetime_browser-dom_trimmed.html"
BERKELEY_SEARCH = "berkeley_caphome_building_search-form_browser-dom_trimmed.html"
MECK = "mecklenburg_inspection-postback_delta_RES-NEW-25-000300_"
MECK_PAGE_1 = MECK + "page-1-of-2_trimmed.txt"
MECK_PAGE_2 = MECK + "page-2-of-2_completed-panel_trimmed.txt"


def test_every_aca_sample_is_covered_here() -> None:
    covered = {PAGE_1, PAGE_4, NO_RESULTS, DETAIL_0938, DETAIL_0931, LOGIN}
    covered |= {HCFL, BERKELEY_ERROR, BERKELEY_SEARCH, MECK_PAGE_1, MECK_PAGE_2}
    assert {p.name for p in family_samples("aca")} == covered


def sample(name: str) -> str:
    # newline="": the deltas' record lengths count the CRLFs of the HTML they carry.
    with (SAMPLES / name).open(encoding="utf-8", newline="") as file:
        return file.read()


@pytest.mark.parametrize(
    ("name", "kind"),
    [
        (PAGE_1, PageKind.RESULTS),
        (PAGE_4, PageKind.RESULTS),
        (NO_RESULTS, PageKind.NO_RESULTS),
        (DETAIL_0938, PageKind.DETAIL),
        (DETAIL_0931, PageKind.DETAIL),
        (LOGIN, PageKind.LOGIN),
        (HCFL, PageKind.DETAIL),
        (BERKELEY_ERROR, PageKind.ERROR),
        (BERKELEY_SEARCH, PageKind.SEARCH_FORM),
    ],
)
def test_every_sample_is_classified(name: str, kind: PageKind) -> None:
    assert classify(sample(name)) is kind


def test_results_page_one_with_display_cap() -> None:
    page = parse_results(sample(PAGE_1))
    assert page is not None
    assert (page.first, page.last, page.total, page.total_capped) == (1, 10, 100, True)
    assert len(page.rows) == 10
    first = page.rows[0]
    assert first.record_number == "ENFR26-0933"
    assert first.cap_id == CapId("26ENF", "00000", "00933")
    assert first.date == date(2026, 9, 14)
    assert first.record_type == "Code Enforcement Case"
    assert first.status == "Intake Processing"
    assert first.address == "7016 S LAKERIDGE DR, 98178"
    assert first.expiration_date is None
    assert first.detail_url is not None
    assert first.detail_url.startswith("/KINGCO/Cap/CapDetail")
    numbers = [row.record_number for row in page.rows]
    assert numbers[1] == "ENFR26-0938"
    assert numbers[-1] == "ENFR26-0928"
    by_number = {row.record_number: row for row in page.rows}
    assert by_number["ENFR26-0931"].status == "No Further Action Required"
    assert by_number["ENFR26-0931"].date == date(2026, 9, 13)
    # The active "Next >" link is a postback to the pager control.
    assert page.next_target == "ctl00$PlaceHolderMain$dgvPermitList$gdvPermitList$ctl13$ctl14"


def test_results_last_page_next_is_a_span() -> None:
    page = parse_results(sample(PAGE_4))
    assert page is not None
    assert (page.first, page.last, page.total, page.total_capped) == (31, 34, 34, False)
    assert [r.record_number for r in page.rows] == [
        "ENFR26-0908",
        "ENFR26-0907",
        "ENFR26-0906",
        "ENFR26-0905",
    ]
    assert [r.status for r in page.rows] == [
        "Intake Processing",
        "Case Opened No Violation Ltr",
        "Case Opened with Violation Ltr",
        "No Further Action Required",
    ]
    assert page.rows[2].address == "United States"
    assert page.rows[3].cap_id == CapId("26ENF", "00000", "00905")
    assert page.next_target is None


def test_no_results_page_has_no_grid() -> None:
    html = sample(NO_RESULTS)
    assert parse_results(html) is None
    form = parse_form(html)
    assert form is not None
    assert form.action == "./CapHome.aspx?module=Enforce&TabName=Enforce"
    # The author trimmed __VIEWSTATE and friends out of every sample.
    assert form.missing() == ["__VIEWSTATE", "__VIEWSTATEGENERATOR", "__EVENTVALIDATION",
                              "ACA_CS_FIELD"]  # fmt: skip


def test_capdetail_intake_processing_with_parcel() -> None:
    detail = parse_detail(sample(DETAIL_0938))
    assert detail is not None
    assert detail.permit_number == "ENFR26-0938"
    assert detail.record_type == "Code Enforcement Case"
    assert detail.status == "Intake Processing"  # leading whitespace inside <h1> dropped
    assert detail.cap_id == CapId("26ENF", "00000", "00938")
    assert detail.address == "21617 NE 159TH ST, 98077"  # primary `*` marker dropped
    assert detail.parcel == "1626069072"  # "Parcel Number:1626069072" without a space
    assert (detail.block, detail.lot, detail.subdivision) == (None, None, None)  # "--"
    assert detail.job_value is None
    assert detail.description is None
    assert detail.applicant is None
    assert detail.conditions == []


def test_capdetail_reached_by_single_result_redirect() -> None:
    html = sample(DETAIL_0931)
    detail = parse_detail(html)
    assert detail is not None
    assert detail.permit_number == "ENFR26-0931"
    assert detail.status == "No Further Action Required"
    assert detail.address == "8506 S 116TH ST, 98178"
    assert (detail.parcel, detail.block, detail.lot) == ("1180001661", "14", "37")
    form = parse_form(html)
    assert form is not None
    assert cap_id_from_url(form.action) == CapId("26ENF", "00000", "00931")


def test_login_page_is_not_a_detail_or_grid() -> None:
    html = sample(LOGIN)
    assert parse_detail(html) is None
    assert parse_results(html) is None


def test_cap_id_parameters_in_any_order_and_case() -> None:
    url = "/X/Cap/CapDetail.aspx?capID3=001AA&agencyCode=X&CAPID1=24BLD&Module=B&capID2=00000"
    assert cap_id_from_url(url) == CapId("24BLD", "00000", "001AA")
    assert cap_id_from_url("/X/Cap/CapDetail.aspx?capID1=24BLD&capID2=00000") is None


def test_hillsborough_tabbed_record_page() -> None:
    """The page issue 20 describes: tabbed layout, expiry in the header, "Total Project Value"
    in the two-column custom fields, the parcel labelled "Folio Number"."""
    html = sample(HCFL)
    detail = parse_detail(html)
    assert detail is not None
    assert detail.permit_number == "HC-BTR-26-0338191"
    assert detail.record_type == "Residential Plumbing Trade Permit"
    assert detail.status == "Complete"
    assert detail.expires == date(2027, 3, 22)  # "Expiration Date: 03/22/2027"
    assert detail.cap_id == CapId("26CAP", "00000", "02829")
    assert detail.address == "2147 Golden Oak Ln, Valrico FL 33594"
    assert detail.parcel == "086453.1238"  # "Folio Number:086453.1238 *"
    assert (detail.block, detail.lot, detail.subdivision) == (None, None, "64Q")
    assert detail.job_value == 2063  # "Total Project Value: 2063"
    assert detail.more_details == {
        "Permit Type New": "Backflow Preventor - new or replacement",
        "Number of Units": "1",
        "Storm Related": "No",
    }
    assert detail.description == (
        "Remove and install new Backflow Preventers - 1 Inch Double Check Valve Backflow Preventer"
    )


def test_hillsborough_completed_inspection() -> None:
    # Saved by a browser after the page's own refresh postback filled the inspection panel.
    lists = parse_inspections(sample(HCFL))
    assert lists is not None
    assert lists.loaded
    assert lists.upcoming == []  # "You have not added any inspections."
    assert lists.completed == [
        InspectionItem(
            type="PLB-Final",
            inspection_id="7958165",
            status="Approved",
            date=date(2026, 9, 17),
            inspector="James May",  # "Result by: James May on 09/17/2026 at 11:16 AM"
            time=time(11, 16),
        )
    ]
    assert lists.completed_next is None  # one row, no pager


def test_hillsborough_empty_upcoming_list_counts_as_rendered() -> None:
    """The upcoming block's id carries the control prefix on the real page
    (`…_InspectionList_divInspectionListUpcoming`); its "You have not added any inspections."
    alone tells the lists came back, even with the completed block gone."""
    tree = html_tree(sample(HCFL))
    completed = tree.css_first("div#ctl00_PlaceHolderMain_InspectionList_completedPanel")
    assert completed is not None
    completed.decompose()
    lists = parse_inspections(tree)
    assert lists is not None
    assert (lists.upcoming, lists.completed, lists.loaded) == ([], [], True)


def _meck(name: str) -> tuple[dict[str, str], dict[tuple[str, str], str]]:
    """A Mecklenburg answer's updatePanel records by id, and all its records by (type, id)."""
    records = parse_delta(sample(name))
    panels = {r.id: r.content for r in records if r.kind == "updatePanel"}
    return panels, {(r.kind, r.id): r.content for r in records}


def _row(status: str, what: str, n: str, day: date, at: time, by: str) -> InspectionItem:
    return InspectionItem(what, n, status, day, by, at)


TOMPKINS = "Matthew Tompkins"


def test_mecklenburg_refresh_answer_lists_the_first_five_completed_inspections() -> None:
    """The answer to the record page's own refresh postback (RES-NEW-25-000300): "Upcoming" with
    "You have not added any inspections.", "Completed (8)" with "Cancelled - 2; Failed - 1;
    Passed - 5", five rows and a pager "< Prev 1 2 Next >"."""
    panels, records = _meck(MECK_PAGE_1)
    assert list(panels) == [PANEL_ID]
    assert records[("formAction", "")] == (
        "./CapDetail.aspx?Module=Building&TabName=Building&capID1=REC25&capID2=00000&capID3=00QJW"
    )
    assert "Completed (8)" in panels[PANEL_ID]
    lists = parse_panel_fragment(panels[PANEL_ID])
    assert lists.loaded
    assert lists.upcoming == []
    assert lists.completed == [
        _row("Passed", "RDP - MS - Mono Slab", "149732", date(2025, 8, 12), time(11, 49), TOMPKINS),
        _row("Failed", "SH - Sheathing", "156809", date(2025, 8, 20), time(11, 27), TOMPKINS),
        _row("Passed", "SH - Sheathing", "158924", date(2025, 8, 22), time(8, 22), TOMPKINS),
        # "Cancelled by: Matthew Tompkins on 08/29/2025 at 08:34 AM"
        _row("Cancelled", "FR - Framing", "165192", date(2025, 8, 29), time(8, 34), TOMPKINS),
        _row("Passed", "FR - Framing", "167408", date(2025, 9, 3), time(11, 44), TOMPKINS),
    ]
    # The pager's "Next >": __doPostBack('…$InspectionList$gvListCompleted$ctl08$ctl04','')
    assert (
        lists.completed_next == "ctl00$PlaceHolderMain$InspectionList$gvListCompleted$ctl08$ctl04"
    )


def test_mecklenburg_next_page_answer_is_the_completed_panel_alone() -> None:
    """The answer to that "Next >" postback refreshes only the completed list's child panel
    (`…_InspectionList_completedPanel`), not the whole inspection panel; it shows "Completed (8)",
    the last three rows, and "Next >" as plain text."""
    panels, records = _meck(MECK_PAGE_2)
    assert list(panels) == [COMPLETED_PANEL_ID]
    assert COMPLETED_PANEL_ID in ANSWER_PANEL_IDS  # the adapter reads this record
    assert (
        records[("panelsToRefreshIDs", "")]
        == "ctl00$PlaceHolderMain$InspectionList$completedPanel,"
    )
    assert "Completed (8)" in panels[COMPLETED_PANEL_ID]
    lists = parse_panel_fragment(panels[COMPLETED_PANEL_ID])
    assert lists.loaded
    assert lists.completed == [
        # "Cancelled by: Wes Radman on 09/07/2025 at 07:20 PM"
        _row("Cancelled", "FR - Framing", "174325", date(2025, 9, 7), time(19, 20), "Wes Radman"),
        _row("Passed", "IN - Insulation", "174603", date(2025, 9, 8), time(9, 35), TOMPKINS),
        _row(
            "Passed", "FI - Final Inspection", "267009", date(2025, 12, 3), time(12, 35), TOMPKINS
        ),
    ]
    assert lists.completed_next is None


def test_mecklenburg_two_pages_make_the_eight_completed_inspections_and_their_tallies() -> None:
    first = parse_panel_fragment(_meck(MECK_PAGE_1)[0][PANEL_ID])
    second = parse_panel_fragment(_meck(MECK_PAGE_2)[0][COMPLETED_PANEL_ID])
    every = first.completed + second.completed
    assert len(every) == 8  # "Completed (8)"
    assert len({i.inspection_id for i in every}) == 8
    counts = {s: sum(i.status == s for i in every) for s in ("Cancelled", "Failed", "Passed")}
    # "Cancelled - 2; Failed - 1; Passed - 5"
    assert counts == {"Cancelled": 2, "Failed": 1, "Passed": 5}


def test_berkeley_error_page_is_known_by_its_form_action() -> None:
    # The title is the agency's ("City of Berkeley"); only the form posts to Error.aspx.
    html = sample(BERKELEY_ERROR)
    assert "error" not in html_tree(html).css_first("title").text().casefold()
    assert classify(html) is PageKind.ERROR
    assert parse_detail(html) is None
    assert parse_results(html) is None


def test_berkeley_search_form_has_the_field_the_adapter_fills() -> None:
    html = sample(BERKELEY_SEARCH)
    form = parse_form(html)
    assert form is not None
    assert form.action == "./CapHome.aspx?module=Building&TabName=Building"
    assert form.fields["ACA_CS_FIELD"] == "0e8bac73dc884220bfcf1735fee6c3e0"
    assert "__LASTFOCUS" in form.fields
    field = html_tree(html).css_first(f'input[name="{PERMIT_NUMBER_FIELD}"]')
    assert field is not None
    assert field.attributes.get("maxlength") == "30"
    label = html_tree(html).css_first(f'label[for="{field.attributes.get("id")}"]')
    assert label is not None
    assert label.text() == "Permit Number:"  # Berkeley's wording of the record-number field
