"""Socrata row parsers on every real gwh9-jnip and 9w5z-rg2h sample."""

from __future__ import annotations

from collections import Counter
from datetime import date

import pytest

from permitapi.sources.base import Inspection, PortalChanged
from permitapi.sources.ladbs.socrata import (
    parse_inspection_rows,
    parse_permit_row,
    parse_permit_rows,
)
from tests.sources.ladbs import samples


def test_unissued_row_has_absent_keys_as_none() -> None:
    row = parse_permit_row(samples.rows(samples.ROW_UNISSUED))
    assert row.permit_number == "21030-20000-00256"
    assert row.permit_type == "Grading"
    assert row.status_desc == "PC Approved"
    assert row.status_date == date(2021, 8, 4)
    assert row.submitted_date == date(2020, 11, 16)
    assert row.issue_date is None
    assert row.cofo_date is None
    assert row.valuation == 0.0  # the string "0" is a real zero
    assert row.apn is None
    assert row.latitude is None
    assert row.address is None


def test_cofo_rows() -> None:
    a = parse_permit_row(samples.rows(samples.ROW_02739))
    assert (a.status_desc, a.issue_date, a.cofo_date) == (
        "CofO Issued",
        date(2021, 4, 26),
        date(2023, 3, 14),
    )
    assert a.status_date == a.cofo_date
    assert a.valuation == 556000.0
    b = parse_permit_row(samples.rows(samples.ROW_05865))
    assert b.work_desc == "(N) 2-story SFD& attached 2-car garage"
    assert (b.submitted_date, b.issue_date, b.cofo_date) == (
        date(2021, 11, 10),
        date(2022, 4, 21),
        date(2024, 6, 11),
    )
    assert b.valuation == 900000.0


def test_finaled_rows() -> None:
    supplemental = parse_permit_row(samples.rows(samples.ROW_SUPPLEMENTAL))
    assert supplemental.permit_number == "18010-20001-05038"
    # prefix year 18, submitted 2020: the prefix is not the submission year
    assert supplemental.submitted_date == date(2020, 1, 28)
    assert supplemental.status_desc == "Permit Finaled"
    assert supplemental.cofo_date is None
    assert supplemental.work_desc is not None
    assert "  " not in supplemental.work_desc
    finaled = parse_permit_row(samples.rows(samples.ROW_20141))
    assert finaled.permit_type == "Bldg-Alter/Repair"
    assert (finaled.issue_date, finaled.status_date) == (date(2021, 9, 13), date(2021, 12, 8))
    assert finaled.valuation == 10000.0


def test_wide_row_with_location_and_parcel() -> None:
    row = parse_permit_row(
        {
            "permit_nbr": "22010-20000-03007",
            "primary_address": "3030 S MIDVALE AVE",
            "zip_code": "90034",
            "apn": "4254-002-003",
            "valuation": "125000.50",
            "geolocation": {"type": "Point", "coordinates": [-118.41, 34.03]},
        }
    )
    assert row.address == "3030 S MIDVALE AVE 90034"
    assert row.apn == "4254002003"
    assert (row.latitude, row.longitude) == (34.03, -118.41)
    assert row.valuation == 125000.5


def test_bad_rows_are_portal_changes() -> None:
    with pytest.raises(PortalChanged):
        parse_permit_rows({"error": True})
    with pytest.raises(PortalChanged):
        parse_permit_row({"permit_nbr": "ABC"})
    with pytest.raises(PortalChanged):
        parse_permit_row({"permit_nbr": "21030-20000-00256", "issue_date": "yesterday"})


def test_three_inspections_with_spaced_permit_numbers() -> None:
    inspections = parse_inspection_rows(
        samples.rows(samples.INSP_3), permit_number="21016-20000-20141"
    )
    assert inspections == [
        Inspection("Smoke Detectors", date(2021, 12, 8), "Approved"),
        Inspection("Final", date(2021, 12, 8), "Permit Finaled"),
        Inspection("BUILDING-Rough-Frame", date(2021, 9, 15), "Approved"),
    ]


def test_duplicates_collapse_49_rows() -> None:
    raw = samples.rows(samples.INSP_49)
    assert len(raw) == 49
    inspections = parse_inspection_rows(raw, permit_number="20010-20000-02739")
    # "Inspection/Permit Finaled" x4 and "CofO Issuance/CofO Issued" x2 on 2023-03-14 -> 1 each
    assert len(inspections) == 49 - 3 - 1
    last_day = [i for i in inspections if i.date == date(2023, 3, 14)]
    assert Counter((i.type, i.result) for i in last_day) == {
        ("CofO Issuance", "CofO Issued"): 1,
        ("Inspection", "Permit Finaled"): 1,
    }
    assert inspections[0].date == date(2023, 3, 14)  # newest first
    assert inspections[-1] == Inspection(
        "Floor/Roof Diaphrgm/Shear Wall", date(2022, 4, 28), "Insp Cancelled"
    )
    results = {i.result for i in inspections}
    assert {
        "SGSOV Approved",
        "OK for CofO",
        "Not Ready for Inspection",
        "Insp Scheduled",
    } <= results


def test_duplicates_collapse_82_rows() -> None:
    raw = samples.rows(samples.INSP_82)
    assert len(raw) == 82
    inspections = parse_inspection_rows(raw, permit_number="21010-10000-05865")
    insulation = [
        i for i in inspections if i.type == "Insulation" and i.result == "Corrections Issued"
    ]
    assert [i.date for i in insulation] == [date(2023, 5, 12), date(2023, 5, 9)]  # 4+4 -> 2
    finaled = [i for i in inspections if i.result == "Permit Finaled"]
    assert finaled == [Inspection("Inspection", date(2024, 6, 11), "Permit Finaled")]
    assert len(inspections) == 82 - 6 - 1
    assert Inspection("Public Counter", date(2024, 2, 13), "Completed") in inspections


def test_rows_of_another_permit_are_ignored() -> None:
    other = {"permit": "21016-20000-20142", "inspection_date": "2022-01-01T00:00:00.000",
             "inspection": "Final", "inspection_result": "Approved"}  # fmt: skip
    raw = [*samples.rows(samples.INSP_3), other]
    assert len(parse_inspection_rows(raw, permit_number="21016-20000-20141")) == 3
