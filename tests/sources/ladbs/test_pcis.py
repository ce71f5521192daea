"""The PCIS detail parser on every real LADBS HTML sample."""

from __future__ import annotations

from datetime import date

import pytest

from permitapi.sources.base import NotFoundAtSource, PortalChanged, RetryLater
from permitapi.sources.ladbs.pcis import (
    PcisClearance,
    PcisHistoryEvent,
    PcisInspection,
    parse_permit_detail,
    split_current_status,
)
from tests.sources.ladbs import samples


def test_every_ladbs_sample_is_covered_by_these_tests() -> None:
    # a capture added to tests/fixtures/ladbs must get its own assertions here
    assert len(samples.ALL) == 14
    assert samples.all_names() == set(samples.ALL)


def test_electrical_permit_finaled() -> None:
    html = samples.text(samples.ELECTRICAL)
    assert "\r\r\n" in html  # the capture artifact is really there
    detail = parse_permit_detail(html)
    assert detail.permit_number == "16041-10000-23545"
    assert detail.address == "3030 S MIDVALE AVE 90034"
    assert detail.plan_check_number == "X16LA10898"
    assert (detail.group, detail.permit_type) == ("Electrical", "Electrical")
    assert detail.sub_type == "1 or 2 Family Dwelling"
    assert detail.primary_use == "()"
    assert detail.work_description == "200A UPGRADE."
    assert detail.issued
    assert detail.issued_date == date(2016, 7, 6)
    assert detail.issuing_office == "Metro"
    assert detail.certificate_of_occupancy is None
    # Current Status date (8/8) is a day after the history's Permit Finaled row (8/7)
    assert (detail.current_status, detail.current_status_date) == (
        "Permit Finaled",
        date(2018, 8, 8),
    )
    assert detail.history == [
        PcisHistoryEvent("Issued", date(2016, 7, 6), "LADBS"),
        PcisHistoryEvent("Permit Finaled", date(2018, 8, 7), "ANDREW NAVE"),
    ]
    assert detail.clearances == []
    assert len(detail.contacts) == 1
    contact = detail.contacts[0]
    assert contact.role == "Contractor"
    assert contact.name == "Kelley Joel Electric; Lic. No.: 917355-C10"
    assert contact.address == "1546 LINDA ROSA AVE LOS ANGELES, CA 90041"  # NBSP runs collapsed
    assert detail.inspectors == ["ARAM AVEDISIAN, (310) 914-3896"]
    assert detail.pending == []
    assert detail.inspections == [
        PcisInspection("Final", date(2018, 8, 7), "Permit Finaled", "ANDREW NAVE"),
        PcisInspection("Service/Power Release", date(2018, 8, 7), "Approved", "ANDREW NAVE"),
    ]


def test_bldg_addition_not_issued_with_clearances() -> None:
    detail = parse_permit_detail(samples.text(samples.ADDITION))
    assert detail.permit_number == "26014-10000-00017"
    assert detail.permit_type == "Bldg-Addition"
    assert detail.work_description is not None
    assert detail.work_description.startswith("EPLAN. TWO STORY ADDITION")
    assert not detail.issued
    assert detail.issued_date is None
    assert detail.issuing_office is None  # the row is absent when not issued
    assert detail.current_status == "Quality Review Completed"
    assert detail.current_status_date == date(2026, 2, 12)
    assert [e.event for e in detail.history] == [
        "Submitted",
        "Assigned to Zoning Architect",
        "Assigned to Plan Check Engineer",
        "Corrections Issued",
        "Quality Review Completed",
    ]
    assert detail.history[0] == PcisHistoryEvent("Submitted", date(2026, 1, 5), "APPLICANT")
    assert len(detail.clearances) == 9
    assert detail.clearances[0] == PcisClearance(
        "Zoning Plan Check", "Not Cleared", date(2026, 1, 5), "Department of Building and Safety"
    )
    assert detail.clearances[-1] == PcisClearance(
        "Sewer availability", "Cleared", date(2026, 2, 24), "MICHAEL BROWN"
    )
    assert sum(c.status == "Cleared" for c in detail.clearances) == 6
    # clearances dated after the Current Status date: the status lags other activity
    assert max(c.date for c in detail.clearances if c.date) > detail.current_status_date
    # "No Data Available." with colspans 7, 2, 4, 4: all observed and empty
    assert detail.contacts == []
    assert detail.inspectors == []
    assert detail.pending == []
    assert detail.inspections == []
    assert "contact information" in detail.sections


def test_grading_pre_inspection_banner_and_plain_status_date() -> None:
    detail = parse_permit_detail(samples.text(samples.GRADING))
    assert detail.permit_number == "26030-10000-01235"
    assert detail.banners == ["Pre - Inspection only, not a permit for construction"]
    assert detail.permit_type == "Grading"
    assert detail.fields["Application / Permit"] == "26030-10000-01235"  # banner did not shift
    assert (detail.current_status, detail.current_status_date) == ("Completed", date(2026, 3, 6))
    assert detail.history == []
    assert detail.clearances == []
    assert detail.inspectors == ["JOHNNY MIRANDA, (310) 914-3937"]
    assert detail.inspections == []


@pytest.mark.parametrize(
    ("text", "status", "day"),
    [
        ("Permit Finaled on 8/8/2018", "Permit Finaled", date(2018, 8, 8)),
        ("Completed on 03/06/2026", "Completed", date(2026, 3, 6)),
        ("Issued on", "Issued", None),
        ("CofO in Progress", "CofO in Progress", None),
        ("Permit\xa0Expired\r\r\n   on  1/2/2024", "Permit Expired", date(2024, 1, 2)),
    ],
)
def test_current_status_variants(text: str, status: str, day: date | None) -> None:
    assert split_current_status(text) == (status, day)


@pytest.mark.parametrize("name", [samples.OTSEGO, samples.STEWART, samples.SEARCH_FORM])
def test_pages_that_are_not_detail_pages_are_portal_changes(name: str) -> None:
    # address results (sections still "Retrieving Data...") and the search form have no permit
    with pytest.raises(PortalChanged):
        parse_permit_detail(samples.text(name), permit_number="21030-20000-00256")


def test_address_results_pages_really_have_no_permit_rows() -> None:
    for name in (samples.OTSEGO, samples.STEWART):
        html = samples.text(name)
        assert "Permit Information found" in html
        assert "Retrieving Data..." in html
        assert "dl-horizontal" not in html


def test_not_found_shell_and_maintenance_page() -> None:
    shell = samples.text(samples.ELECTRICAL)
    start, end = shell.index('<dl class="dl-horizontal'), shell.index("</table>\r\r\n    </h5>")
    shell = shell[:start] + shell[end + len("</table>") :]
    with pytest.raises(NotFoundAtSource):
        parse_permit_detail(shell, permit_number="99999-99999-99999")
    maintenance = (
        "<html><head><title>Error</title></head>"
        "<body><h2>Service not available at this time</h2></body></html>"
    )
    with pytest.raises(RetryLater) as caught:
        parse_permit_detail(maintenance)
    assert caught.value.reason == "maintenance"
