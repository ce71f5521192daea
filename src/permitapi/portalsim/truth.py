"""The simulator's own status truth: raw portal status -> normalised status, per family.

Written from the portals' published vocabularies as the research notes list them (LADBS
`status_desc` values and PCIS tokens, EPIC-LA case statuses, the Accela agencies' labels and
the BLDS-style mapping proposed there), NOT from the adapters' tables: the round-trip tests
compare the two, so a wrong mapping on either side fails a test instead of agreeing with
itself. Where the two disagreed, docs/decisions.md ("The simulator's own truth") says which
was wrong and why. Nothing here imports adapter code (an import-linter contract checks it).
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from permitapi.sources.base import NormalizedStatus as N

_SPACE = re.compile(r"\s+")


def label_key(raw: str) -> str:
    """Portals pad labels with spaces and NBSP and vary case; compare without either."""
    return _SPACE.sub(" ", raw.replace("\xa0", " ")).strip().casefold()


def _table(groups: Mapping[N, tuple[str, ...]]) -> dict[str, N]:
    return {raw: status for status, raws in groups.items() for raw in raws}


# LADBS: gwh9-jnip status_desc values (unissued and post-issuance) and the PCIS detail-page
# tokens, grouped the way the mapping table of the research notes groups them. "Permit Closed"
# is ambiguous there (final-like to the project that reads PCIS pages, expired to another):
# the PCIS page is the primary source, so it is final.
LADBS: dict[str, N] = _table(
    {
        N.APPLICATION_RECEIVED: ("Submitted", "Submitted for Qual. Rev.", "Application Submittal",
                                 "Application Pending", "Pending"),
        N.IN_REVIEW: ("PC Assigned", "PC in Progress", "PC Info Complete",
                      "Verifications in Progress", "Quality Review Completed",
                      "Reviewed by Supervisor", "No Progress"),
        N.APPLICANT_ACTION: ("Corrections Issued", "Re-Submittal Required"),
        N.APPROVED_PENDING_ISSUE: ("PC Approved", "Ready to Issue", "Not Ready to Issue"),
        N.ON_HOLD: ("Plans on Hold",),
        N.ISSUED: ("Issued", "Re-Activate Permit", "CofO in Progress", "OK for CofC"),
        N.FINALED: ("Permit Finaled", "Completed", "Permit Closed"),
        N.OCCUPANCY: ("CofO Issued", "CofC Issued", "CofO Corrected"),
        N.EXPIRED: ("Permit Expired", "PC Expired"),
        N.CANCELLED: ("Permit Withdrawn", "Application Withdrawn", "Permit Revoked",
                      "Refund in Progress", "Refund Completed", "Refund Closed", "Not Issued",
                      "Permit Expired-Status Void", "Permit Finaled-Status Void",
                      "CofO Issued-Status Void", "Reactivate - Status Void"),
    }
)  # fmt: skip

# EPIC-LA case STATUS values on permit cases. (Plan cases read "Open" as still in review; the
# EPIC-LA simulator states that per case kind, see portalsim/epicla/data.py.)
EPICLA: dict[str, N] = _table(
    {
        N.APPLICATION_RECEIVED: ("New", "New - Online", "Accepted"),
        N.IN_REVIEW: ("In Review", "Review", "Zoning Cleared", "Exempt"),
        N.APPLICANT_ACTION: ("Waiting for Applicant",),
        N.APPROVED_PENDING_ISSUE: ("Approved", "Approved Pending Clearances",
                                   "Approved Ready for Permit"),
        N.ON_HOLD: ("Hold", "On Hold"),
        N.ISSUED: ("Issued", "Open"),
        N.FINALED: ("Finaled", "Completed", "Recorded"),
        N.EXPIRED: ("Expired",),
        N.CANCELLED: ("Void", "Voided", "Canceled", "Cancelled", "Withdrawn", "Revoked",
                      "Denied", "Rejected"),
    }
)  # fmt: skip

# Accela: labels the agencies publish (San Diego, Sacramento, Anaheim, Ontario, San Bernardino
# County, Fort Lauderdale, Polk, Hollywood, King County), grouped by meaning.
ACA: dict[str, N] = _table(
    {
        N.APPLICATION_RECEIVED: ("Received", "Submitted", "Applied", "Filed", "Opened", "Open",
                                 "Created", "Accepted", "Plans Received", "Plan Set Submitted"),
        N.IN_REVIEW: ("In Review", "Plan Review", "Under Review", "In P/R", "In Process",
                      "Processing", "In Progress", "Review Phase Complete", "Deemed Complete",
                      "PAD", "Revision Submitted"),
        N.APPLICANT_ACTION: ("Awaiting Client Reply", "More Information Required",
                             "Revisions Required", "Resubmittal Required", "Corrections Received",
                             "Contractor Info Required", "Incomplete Submittal",
                             "Submittal Incomplete", "Returned"),
        N.APPROVED_PENDING_ISSUE: ("Fees Due", "Fees Invoiced", "Plan Check Fees Invoiced",
                                   "Awaiting Initial Fee Payment", "Pending Invoice Payment",
                                   "Issuance Fees Paid", "Ready to Issue", "Pending Issuance",
                                   "Awaiting Permit Issuance", "Approved Upon Final Payment",
                                   "OTC"),
        N.ON_HOLD: ("On Hold", "Suspended"),
        N.ISSUED: ("Issued", "Active", "Approved", "Approved with Conditions",
                   "Approved with Comments", "Extension Approved", "Delinquent"),
        N.INSPECTIONS: ("Inspections", "Inspecting", "Inspection Followup",
                        "Inspection Required", "Inspection Complete"),
        N.FINALED: ("Finaled", "Final", "Complete", "Completed", "Closed", "Closed-Complete",
                    "Closed - Final", "Case Closed"),
        N.OCCUPANCY: ("Closed-CO Issued", "Closed-CC Issued", "Certificate of Occupancy"),
        N.EXPIRED: ("Expired", "Expired Permit", "Application Expired"),
        N.CANCELLED: ("Void", "Withdrawn", "Closed - Withdrawn", "Cancelled", "Canceled",
                      "Cancelled - Applicant Request", "Disapproved", "Denied", "Waiver Denied",
                      "Terminated", "Abandoned", "Purged", "Failed Scout Validation"),
    }
)  # fmt: skip

# Where one agency's label means something else than on most tenants.
ACA_AGENCIES: dict[str, dict[str, N]] = {
    # Anaheim: "Approved" closes a planning review before any permit; "Adopted" ends a case.
    "aca:anaheim": {"Approved": N.APPROVED_PENDING_ISSUE, "Adopted": N.FINALED},
    # San Bernardino County approves in parts before issuance, and records after finals.
    "aca:sbc": {
        "Approved": N.APPROVED_PENDING_ISSUE, "Approved with Conditions": N.IN_REVIEW,
        "Approved with Comments": N.IN_REVIEW, "Part 1 Approved": N.IN_REVIEW,
        "Part 2 Approved": N.IN_REVIEW, "Part 2 Ready for Review": N.IN_REVIEW,
        "Report Approved": N.IN_REVIEW, "Paid": N.APPROVED_PENDING_ISSUE,
        "Recorded": N.FINALED,
    },
    # San Diego's "Approved" is a review outcome: "Approved Upon Final Payment" and issuance
    # follow it in the published task sequence.
    "aca:sandiego": {"Approved": N.APPROVED_PENDING_ISSUE},
    "aca:sacramento": {"Estimate": N.APPLICATION_RECEIVED},
    "aca:ftl": {
        "Awaiting Revision Issuance": N.APPROVED_PENDING_ISSUE,
        "Pending Master": N.ON_HOLD,
        "Pending Master Corrections": N.APPLICANT_ACTION,
    },
    "aca:kingco": {"Intake Processing": N.APPLICATION_RECEIVED},
}  # fmt: skip


def aca_vocabulary(slug: str) -> dict[str, N]:
    """Every label one Accela agency publishes, with what it means there."""
    merged = dict(ACA)
    merged.update(ACA_AGENCIES.get(slug, {}))
    return merged


def vocabulary(family: str, slug: str) -> dict[str, N]:
    if family == "aca":
        return aca_vocabulary(slug)
    return {"ladbs": LADBS, "epicla": EPICLA}.get(family, {})


def normalize(family: str, slug: str, raw: str) -> N:
    """The simulator's meaning of a raw status (the control API's default for new labels)."""
    wanted = label_key(raw)
    for label, status in vocabulary(family, slug).items():
        if label_key(label) == wanted:
            return status
    return N.UNKNOWN
