"""LADBS status vocabulary -> normalised status, and inspection-result classes.

Sources: research/portals.md §1.7 (gwh9-jnip `status_desc`, PCIS "Current Status" tokens) and
§4.3 (mapping). Decisions are recorded in docs/decisions.md under "LADBS".
"""

from __future__ import annotations

from typing import Literal

from permitapi.sources.base import NormalizedStatus as N
from permitapi.sources.status import StatusTable, status_key

LADBS_STATUSES: dict[str, N] = {
    # filed, not yet in review
    "Submitted": N.APPLICATION_RECEIVED,
    "Submitted for Qual. Rev.": N.APPLICATION_RECEIVED,
    "Application Submittal": N.APPLICATION_RECEIVED,
    "Application Pending": N.APPLICATION_RECEIVED,
    "Pending": N.APPLICATION_RECEIVED,
    # plan check
    "PC Assigned": N.IN_REVIEW,
    "PC in Progress": N.IN_REVIEW,
    "PC Info Complete": N.IN_REVIEW,
    "Verifications in Progress": N.IN_REVIEW,
    "Quality Review Completed": N.IN_REVIEW,
    "Reviewed by Supervisor": N.IN_REVIEW,
    "No Progress": N.IN_REVIEW,
    # waiting on the applicant
    "Corrections Issued": N.APPLICANT_ACTION,
    "Re-Submittal Required": N.APPLICANT_ACTION,
    # approved, not yet issued
    "PC Approved": N.APPROVED_PENDING_ISSUE,
    "Ready to Issue": N.APPROVED_PENDING_ISSUE,
    "Not Ready to Issue": N.APPROVED_PENDING_ISSUE,
    "Plans on Hold": N.ON_HOLD,
    # issued and under construction
    "Issued": N.ISSUED,
    "Re-Activate Permit": N.ISSUED,
    "CofO in Progress": N.ISSUED,
    "OK for CofC": N.ISSUED,
    # done
    "Permit Finaled": N.FINALED,
    "Completed": N.FINALED,
    # Ambiguous across public projects (EXPIRED in one, final in another). The PCIS detail page is
    # our primary source and the project that reads it treats it as final-like, so: FINALED. The
    # adapter does not invent a final date for it (see finaled_date in adapter.py).
    "Permit Closed": N.FINALED,
    "CofO Issued": N.OCCUPANCY,
    "CofC Issued": N.OCCUPANCY,
    "CofO Corrected": N.OCCUPANCY,
    # lapsed
    "Permit Expired": N.EXPIRED,
    "PC Expired": N.EXPIRED,
    # ended without completion
    "Permit Withdrawn": N.CANCELLED,
    "Application Withdrawn": N.CANCELLED,
    "Permit Revoked": N.CANCELLED,
    "Refund in Progress": N.CANCELLED,
    "Refund Completed": N.CANCELLED,
    "Refund Closed": N.CANCELLED,
    "Not Issued": N.CANCELLED,
    # "-Status Void": the status named before the suffix was voided, so the permit is void
    "Permit Expired-Status Void": N.CANCELLED,
    "Permit Finaled-Status Void": N.CANCELLED,
    "CofO Issued-Status Void": N.CANCELLED,
    "Reactivate - Status Void": N.CANCELLED,
}

LADBS_STATUS_TABLE = StatusTable("ladbs", LADBS_STATUSES)

# Status-history events that are paperwork, not a change of state (research §1.7).
CLERICAL_EVENTS = frozenset(
    status_key(event)
    for event in (
        "Building Plans Picked Up",
        "Green Plans Picked Up",
        "Electrical Plans Picked Up",
        "Mechanical Plans Picked Up",
        "Disabled Access Plans Picked Up",
        "Process Cleared",
    )
)

# History events that mark the end of construction; their date is the permit's final date.
FINAL_EVENTS = frozenset(
    status_key(event) for event in ("Permit Finaled", "Completed", "CofO Issued", "CofC Issued")
)

CORRECTION_EVENTS = frozenset(
    status_key(event) for event in ("Corrections Issued", "Re-Submittal Required")
)

InspectionClass = Literal["pass", "fail", "other"]

_PASS = frozenset(
    status_key(result)
    for result in (
        "Approved",
        "Conditional Approval",
        "Partial Approval",
        "Completed",
        "Completed (special insp)",
        "Final",
        "Permit Finaled",
        "OK for CofO",
        "OK for CofC",
        "CofO Issued",
        "CofC Issued",
        "SGSOV Approved",
    )
)
_FAIL = frozenset(
    status_key(result)
    for result in (
        "Corrections Issued",
        "Not Ready for Inspection",
        "SGSOV Not Ready",
        "Disapproved",
        "Not Approved",
        "Failed",
    )
)


def classify_inspection_result(result: str | None) -> InspectionClass:
    """`pass` / `fail` for completed inspections with a verdict; `other` for everything else.

    `other` covers cancellations (Cancelled, Insp Cancelled), scheduling (Insp Scheduled),
    in-progress markers (CofO in Progress, Partial Inspection) and unknown values: none of them
    is a completed inspection, so pass_rate ignores them.
    """
    if result is None:
        return "other"
    key = status_key(result)
    if key in _PASS:
        return "pass"
    if key in _FAIL:
        return "fail"
    return "other"


def pass_rate(results: list[str | None]) -> float | None:
    """Share of passes among completed (pass or fail) inspections; None when there are none."""
    classes = [classify_inspection_result(r) for r in results]
    completed = [c for c in classes if c != "other"]
    if not completed:
        return None
    return sum(1 for c in completed if c == "pass") / len(completed)
