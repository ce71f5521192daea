"""The one inspection-result classifier behind pass rates."""

from __future__ import annotations

import pytest

from permitapi.permit.resource.inspection_results import (
    InspectionOutcome,
    classifier_for,
    classify,
    pass_rate,
)

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
        ("Not Ready for Inspection", FAILED),
        ("SGSOV Not Ready", FAILED),
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
    assert pass_rate(["Approved", "Corrections Issued", "Cancelled", "No Access", None]) == 0.5
    assert pass_rate(["Approved", "Approved", "Fail"]) == 0.667
    assert pass_rate(["Cancelled", "Insp Scheduled", "Partial Inspection"]) is None
    assert pass_rate([]) is None


def test_a_family_classifier_is_used_for_its_jurisdictions() -> None:
    # LADBS exports its own table: its `other` class (cancellations too) maps to unclassified,
    # where the fallback would say not performed; both stay out of the rate.
    assert classifier_for("ladbs")("Completed (special insp)") is PASSED
    assert classifier_for("ladbs")("Insp Cancelled") is UNCLASSIFIED
    assert classifier_for("aca")("Partial Pass") is PASSED
    assert classifier_for("aca")("Insp Cancelled") is UNCLASSIFIED
    assert classifier_for(None) is classify
    assert pass_rate(["Approved", "Not Ready for Inspection"], "ladbs") == 0.5


def test_epicla_uses_its_own_table() -> None:
    # One rule in every family: a partial pass is a pass (docs/decisions.md).
    assert classifier_for("epicla")("Partial Pass") is PASSED
    assert classifier_for("epicla")("Not Passed") is FAILED
    assert classify("Partial Pass") is PASSED
