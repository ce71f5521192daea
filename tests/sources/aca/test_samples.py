"""ACA parsers on the six real King County pages in tests/fixtures/aca (origins in its README)."""

from __future__ import annotations

from datetime import date

import pytest

from permitapi.sources.aca.detail import parse_detail
from permitapi.sources.aca.pages import PageKind, classify, parse_form
from permitapi.sources.aca.results import CapId, cap_id_from_url, parse_results
from tests.support.samples import family_samples, samples_dir

SAMPLES = samples_dir() / "aca"
PAGE_1 = "kingco_caphome_enforce_search-results_page-1_showing-100-plus_trimmed.html"
PAGE_4 = "kingco_caphome_enforce_search-results_page-4-of-4_trimmed.html"
NO_RESULTS = "kingco_caphome_enforce_search-no-results_trimmed.html"
DETAIL_0938 = "kingco_capdetail_ENFR26-0938_intake-processing_parcel_trimmed.html"
DETAIL_0931 = "kingco_capdetail_ENFR26-0931_single-result-search-redirect_trimmed.html"
LOGIN = "kingco_login-redirect_angular-login-panel_trimmed.html"


def test_every_aca_sample_is_covered_here() -> None:
    covered = {PAGE_1, PAGE_4, NO_RESULTS, DETAIL_0938, DETAIL_0931, LOGIN}
    assert {p.name for p in family_samples("aca")} == covered


def sample(name: str) -> str:
    return (SAMPLES / name).read_text(encoding="utf-8")


@pytest.mark.parametrize(
    ("name", "kind"),
    [
        (PAGE_1, PageKind.RESULTS),
        (PAGE_4, PageKind.RESULTS),
        (NO_RESULTS, PageKind.NO_RESULTS),
        (DETAIL_0938, PageKind.DETAIL),
        (DETAIL_0931, PageKind.DETAIL),
        (LOGIN, PageKind.LOGIN),
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
