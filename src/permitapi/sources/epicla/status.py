"""EPIC-LA status vocabulary (research/portals.md §2.5, §4.3) and the rules on top of the table.

Choices (docs/decisions.md, "EPIC-LA"):
- `Open` is `issued` on permit cases, as research says, but `in_review` on PlanManagement cases
  (CREC…): in the samples a plan case stays `Open` through plan check and even after its
  building permit finaled, so it never means "issued" there.
- `Issued`/`Open` permits become `inspections` when the layer shows a LAST_INSPECTION_DATE.
- `Exempt` is `in_review` as the research proposes (its meaning is unclear).
"""

from __future__ import annotations

from datetime import date
from typing import Literal

from permitapi.sources.base import NormalizedStatus as N
from permitapi.sources.status import StatusTable, status_key

# Raw labels exactly as the portal spells them (also used to build `STATUS IN (...)` filters).
RAW_STATUSES: dict[str, N] = {
    "New": N.APPLICATION_RECEIVED,
    "New - Online": N.APPLICATION_RECEIVED,
    "Accepted": N.APPLICATION_RECEIVED,
    "In Review": N.IN_REVIEW,
    "Review": N.IN_REVIEW,
    "Zoning Cleared": N.IN_REVIEW,
    "Exempt": N.IN_REVIEW,
    "Waiting for Applicant": N.APPLICANT_ACTION,
    "Approved": N.APPROVED_PENDING_ISSUE,
    "Approved Pending Clearances": N.APPROVED_PENDING_ISSUE,
    "Approved Ready for Permit": N.APPROVED_PENDING_ISSUE,
    "Hold": N.ON_HOLD,
    "On Hold": N.ON_HOLD,
    "Issued": N.ISSUED,
    "Open": N.ISSUED,
    "Finaled": N.FINALED,
    "Completed": N.FINALED,
    "Recorded": N.FINALED,
    "Expired": N.EXPIRED,
    "Void": N.CANCELLED,
    "Voided": N.CANCELLED,
    "Canceled": N.CANCELLED,
    "Cancelled": N.CANCELLED,
    "Withdrawn": N.CANCELLED,
    "Revoked": N.CANCELLED,
    "Denied": N.CANCELLED,
    "Rejected": N.CANCELLED,
}

EPICLA_STATUS = StatusTable("epicla", RAW_STATUSES)

PLAN_MODULE = "PlanManagement"
# On plan cases these labels mean something else than on permits (see module docstring).
PLAN_OVERRIDES: dict[str, N] = {status_key("Open"): N.IN_REVIEW}

FINAL_STATUSES = frozenset({N.FINALED, N.FINALED_CONDITIONAL, N.OCCUPANCY})


def normalize_case_status(raw: str | None, module: str | None, last_inspection: date | None) -> N:
    if raw is not None and module == PLAN_MODULE:
        override = PLAN_OVERRIDES.get(status_key(raw))
        if override is not None:
            return override
    status = EPICLA_STATUS.normalize(raw)
    if status is N.ISSUED and last_inspection is not None:
        return N.INSPECTIONS
    return status


def raw_labels_for(status: N) -> list[str]:
    """Every raw label that normalises to `status` (for discovery's status filter)."""
    return [raw for raw, mapped in RAW_STATUSES.items() if mapped is status]


# --- workflow steps and inspections --------------------------------------------------------

StepState = Literal["completed", "failed", "partial", "in_progress", "scheduled", "unknown"]

# Step states the SPA shows (research §2.2): Passed / Not Passed / Partial Pass / Pass /
# Started / "Scheduled for MM/DD/YYYY".
_STEP_STATES: dict[str, StepState] = {
    "passed": "completed",
    "pass": "completed",
    "not passed": "failed",
    "partial pass": "partial",
    "started": "in_progress",
    "scheduled": "scheduled",
}


def workflow_step_state(status: str | None) -> StepState:
    if not status:
        return "unknown"
    key = status_key(status)
    if key.startswith("scheduled"):  # "Scheduled for 09/15/2025"
        return "scheduled"
    return _STEP_STATES.get(key, "unknown")


def step_is_done(status: str | None) -> bool:
    """A step with a result (it has a completion date); started/scheduled ones are pending."""
    return workflow_step_state(status) in ("completed", "failed", "partial")


InspectionOutcome = Literal["pass", "fail", "other"]

# A partial pass counts as a pass, as in every family: the scope that was inspected passed
# (docs/decisions.md, "One pass_rate rule").
_PASS = frozenset({"passed", "pass", "partial pass", "approved", "approved with conditions"})
_FAIL = frozenset({"not passed", "failed", "fail", "disapproved", "correction required"})
PENDING_INSPECTION_STATES = frozenset(
    {"scheduled", "requested", "pending", "rescheduled", "in progress"}
)


def classify_inspection_result(result: str | None) -> InspectionOutcome:
    """pass / fail for pass_rate; everything else (cancelled, no access, unknown) is `other`
    and is left out of the pass_rate denominator."""
    if not result:
        return "other"
    key = status_key(result)
    if key in _PASS:
        return "pass"
    if key in _FAIL:
        return "fail"
    return "other"


def inspection_is_pending(status: str | None) -> bool:
    return status is not None and status_key(status) in PENDING_INSPECTION_STATES
