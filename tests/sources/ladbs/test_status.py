"""LADBS status table and inspection-result classes."""

from __future__ import annotations

import pytest

from permitapi.sources.base import NormalizedStatus as N
from permitapi.sources.ladbs.status import (
    LADBS_STATUS_TABLE,
    LADBS_STATUSES,
    classify_inspection_result,
    pass_rate,
)
from tests.sources.ladbs import samples


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("Quality Review Completed", N.IN_REVIEW),
        ("PC Approved", N.APPROVED_PENDING_ISSUE),
        ("Corrections Issued", N.APPLICANT_ACTION),
        ("Plans on Hold", N.ON_HOLD),
        ("Issued", N.ISSUED),
        ("CofO in Progress", N.ISSUED),
        ("Permit Finaled", N.FINALED),
        ("Completed", N.FINALED),
        ("Permit Closed", N.FINALED),
        ("CofO Issued", N.OCCUPANCY),
        ("Permit Expired", N.EXPIRED),
        ("Permit Finaled-Status Void", N.CANCELLED),
        ("Refund Completed", N.CANCELLED),
        ("permit\xa0finaled ", N.FINALED),
        ("Something New", N.UNKNOWN),
    ],
)
def test_status_table(raw: str, expected: N) -> None:
    assert LADBS_STATUS_TABLE.normalize(raw) is expected


def test_every_status_in_the_samples_is_mapped() -> None:
    for name in (samples.ROW_SUPPLEMENTAL, samples.ROW_02739, samples.ROW_05865,
                 samples.ROW_20141, samples.ROW_UNISSUED):  # fmt: skip
        assert LADBS_STATUS_TABLE.normalize(samples.rows(name)["status_desc"]) is not N.UNKNOWN
    assert len(LADBS_STATUSES) >= 40


def test_every_inspection_result_in_the_samples_is_classified_on_purpose() -> None:
    results = {
        row["inspection_result"]
        for name in (samples.INSP_3, samples.INSP_49, samples.INSP_82)
        for row in samples.rows(name)
    }
    classes = {r: classify_inspection_result(r) for r in results}
    assert {r for r, c in classes.items() if c == "pass"} == {
        "Approved", "Conditional Approval", "Partial Approval", "Completed", "Permit Finaled",
        "OK for CofO", "CofO Issued", "SGSOV Approved",
    }  # fmt: skip
    assert {r for r, c in classes.items() if c == "fail"} == {
        "Corrections Issued", "Not Ready for Inspection", "SGSOV Not Ready",
    }  # fmt: skip
    assert {r for r, c in classes.items() if c == "other"} == {
        "Cancelled", "Insp Cancelled", "Insp Scheduled", "CofO in Progress", "Partial Inspection",
    }  # fmt: skip


def test_pass_rate_counts_completed_inspections_only() -> None:
    assert pass_rate(["Approved", "Corrections Issued", "Cancelled", "Insp Scheduled"]) == 0.5
    assert pass_rate(["Cancelled", None]) is None
