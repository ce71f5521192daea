"""The one inspection-result classifier behind pass rates."""

from __future__ import annotations

import pytest

from permitapi.permit.inspection_results import InspectionOutcome, classify, pass_rate

PASSED, FAILED = InspectionOutcome.PASSED, InspectionOutcome.FAILED
NOT_PERFORMED, UNCLASSIFIED = InspectionOutcome.NOT_PERFORMED, InspectionOutcome.UNCLASSIFIED


@pytest.mark.parametrize(
    ("result", "outcome"),
    [
        # strings seen on the saved portal pages
        ("Approved", PASSED),
        ("Partial Approval", PASSED),
        ("Conditional Approval", PASSED),
        ("Permit Finaled", PASSED),
        ("CofO Issued", PASSED),
        ("SGSOV Approved", PASSED),
        ("Corrections Issued", FAILED),
        ("Not Ready for Inspection", NOT_PERFORMED),
        ("SGSOV Not Ready", NOT_PERFORMED),
        ("Insp Scheduled", NOT_PERFORMED),
        ("Insp Cancelled", NOT_PERFORMED),
        ("Cancelled", NOT_PERFORMED),
        # common Accela / EnerGov vocabulary
        ("Pass", PASSED),
        ("PASSED", PASSED),
        ("Partial Pass", PASSED),
        ("Fail", FAILED),
        ("Failed", FAILED),
        ("Disapproved", FAILED),
        ("Not Approved", FAILED),
        ("Rescheduled", NOT_PERFORMED),
        ("No Access", NOT_PERFORMED),
        ("Canceled", NOT_PERFORMED),
        ("", NOT_PERFORMED),
        (None, NOT_PERFORMED),
        ("Partial Inspection", UNCLASSIFIED),
    ],
)
def test_classify(result: str | None, outcome: InspectionOutcome) -> None:
    assert classify(result) is outcome


def test_pass_rate_counts_completed_only() -> None:
    assert pass_rate(["Approved", "Corrections Issued", "Cancelled", "Not Ready", None]) == 0.5
    assert pass_rate(["Approved", "Approved", "Fail"]) == 0.667
    assert pass_rate(["Cancelled", "Insp Scheduled", "Partial Inspection"]) is None
    assert pass_rate([]) is None
