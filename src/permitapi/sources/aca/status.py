"""Accela status vocabulary -> NormalizedStatus (research/portals.md §4.3, Accela rows).

One family table plus per-agency overrides keyed by jurisdiction slug: Accela statuses are
agency-configured and the same label means different things on different tenants. The
clearest case is "Approved": a building permit issued on most tenants, a planning approval
before any permit on Anaheim, a pre-issuance (partial) approval on San Bernardino County.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import cache
from typing import Literal

from permitapi.sources.base import NormalizedStatus as S
from permitapi.sources.status import StatusTable, status_key

_GROUPS: dict[S, tuple[str, ...]] = {
    S.APPLICATION_RECEIVED: (
        "Received", "Submitted", "Applied", "Filed", "Opened", "Open", "Created", "Accepted",
        "Plans Received", "Plan Set Submitted",
    ),
    S.IN_REVIEW: (
        "In Review", "Plan Review", "Under Review", "In P/R", "In Process", "Processing",
        "In Progress", "Review Phase Complete", "Deemed Complete", "PAD", "Revision Submitted",
    ),
    S.APPLICANT_ACTION: (
        "Awaiting Client Reply", "More Information Required", "Revisions Required",
        "Resubmittal Required", "Corrections Received", "Contractor Info Required",
        "Incomplete Submittal", "Submittal Incomplete", "Returned",
    ),
    S.APPROVED_PENDING_ISSUE: (
        "Fees Due", "Fees Invoiced", "Plan Check Fees Invoiced", "Awaiting Initial Fee Payment",
        "Pending Invoice Payment", "Issuance Fees Paid", "Ready to Issue", "Pending Issuance",
        "Awaiting Permit Issuance", "Approved Upon Final Payment", "OTC",
    ),
    S.ON_HOLD: ("On Hold", "Suspended"),
    S.ISSUED: (
        "Issued", "Active", "Approved", "Approved with Conditions", "Approved with Comments",
        "Extension Approved", "Delinquent",
    ),
    S.INSPECTIONS: (
        "Inspections", "Inspecting", "Inspection Followup", "Inspection Required",
        "Inspection Complete",
    ),
    S.FINALED: (
        "Finaled", "Final", "Complete", "Completed", "Closed", "Closed-Complete",
        "Closed - Final", "Case Closed",
    ),
    S.OCCUPANCY: ("Closed-CO Issued", "Closed-CC Issued", "Certificate of Occupancy"),
    S.EXPIRED: ("Expired", "Expired Permit", "Application Expired"),
    S.CANCELLED: (
        "Void", "Withdrawn", "Closed - Withdrawn", "Cancelled", "Canceled",
        "Cancelled - Applicant Request", "Disapproved", "Denied", "Waiver Denied", "Terminated",
        "Abandoned", "Purged", "Failed Scout Validation",
    ),
}  # fmt: skip

FAMILY_TABLE: dict[str, S] = {raw: status for status, raws in _GROUPS.items() for raw in raws}

AGENCY_OVERRIDES: dict[str, dict[str, S]] = {
    # Anaheim "Approved" is a planning approval: nothing is issued yet. "Adopted" closes a
    # planning case (ordinance/plan adopted).
    "aca:anaheim": {"Approved": S.APPROVED_PENDING_ISSUE, "Adopted": S.FINALED},
    # SBC approvals come in parts before issuance; the record is still in review.
    "aca:sbc": {
        "Approved": S.APPROVED_PENDING_ISSUE,
        "Approved with Conditions": S.IN_REVIEW,
        "Approved with Comments": S.IN_REVIEW,
        "Part 1 Approved": S.IN_REVIEW,
        "Part 2 Approved": S.IN_REVIEW,
        "Part 2 Ready for Review": S.IN_REVIEW,
        "Report Approved": S.IN_REVIEW,
        "Paid": S.APPROVED_PENDING_ISSUE,
        "Recorded": S.FINALED,
    },
    # San Diego DSD "Approved" is the review outcome before "Issued".
    "aca:sandiego": {"Approved": S.APPROVED_PENDING_ISSUE},
    "aca:sacramento": {"Estimate": S.APPLICATION_RECEIVED},
    "aca:ftl": {
        "Awaiting Revision Issuance": S.APPROVED_PENDING_ISSUE,
        "Pending Master": S.ON_HOLD,
        "Pending Master Corrections": S.APPLICANT_ACTION,
    },
    # King County: the only real samples (Enforce module). "Intake Processing" is intake;
    # the code-enforcement case outcomes have no BLDS equivalent and stay unmapped.
    "aca:kingco": {"Intake Processing": S.APPLICATION_RECEIVED},
}


@cache
def table_for(slug: str) -> StatusTable:
    """The family table with the agency's overrides applied (later keys win)."""
    merged: dict[str, S] = dict(FAMILY_TABLE)
    merged.update(AGENCY_OVERRIDES.get(slug, {}))
    return StatusTable("aca", merged)


def agency_vocabulary(slug: str) -> Mapping[str, S]:
    """Raw label -> normalized status as published for one agency (simulator and docs)."""
    merged: dict[str, S] = dict(FAMILY_TABLE)
    merged.update(AGENCY_OVERRIDES.get(slug, {}))
    return merged


InspectionOutcome = Literal["pass", "fail", "other"]

_PASS = frozenset(
    status_key(raw)
    for raw in (
        "Pass", "Passed", "Approved", "Approved with Conditions", "Approved Unconditionally",
        "Complied", "Finaled", "Final", "No Violations - Pass", "Corrected Violations - Pass",
        "Pass with Corrections", "Completed - Pass", "Partial Pass", "Partial Approval",
        "Partially Approved",
    )
)  # fmt: skip
_FAIL = frozenset(
    status_key(raw)
    for raw in (
        "Fail", "Failed", "Disapproved", "Not Approved", "Denied", "Rejected",
        "Corrections Required", "Correction Notice", "Partial Fail", "Re-Inspection Required",
        "Violations - Fail", "Completed - Fail",
    )
)  # fmt: skip


def classify_inspection_result(raw: str | None) -> InspectionOutcome:
    """pass / fail for pass_rate; cancellations and not-ready are "other". A partial pass is a
    pass, as in every family (docs/decisions.md, "One pass_rate rule")."""
    key = status_key(raw or "")
    if key in _PASS:
        return "pass"
    if key in _FAIL:
        return "fail"
    return "other"
