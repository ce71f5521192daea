"""A realistic `data` object for every event type: what `POST /webhooks/{id}/simulate` sends,
and the documented shape each producer emits (docs/decisions.md, "Event data").

The permit events share one vocabulary: `status`/`portal_status` are the normalised status and
the portal's own text, as in the status record. Producers build their data with the helpers
here so that a simulated delivery and a live one never drift apart.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from permitapi.event.service import (
    CORRECTIONS_REQUIRED,
    CRITERIA_MATCH,
    EVENT_TYPES,
    INSPECTION_COMPLETE,
    OPERATION_COMPLETED,
    PERMIT_APPROVED,
    PERMIT_CREATED,
    PERMIT_DENIED,
    STATUS_CHANGE,
)
from permitapi.kit.clock import isoformat_z

EXAMPLE_PERMIT_NUMBER = "24010-10000-01234"
EXAMPLE_JURISDICTION = "ladbs"


def status_transition(
    *,
    old_status: str | None,
    new_status: str,
    old_portal_status: str | None,
    new_portal_status: str,
    changed_at: datetime,
) -> dict[str, Any]:
    """status_change, permit_approved and permit_denied all carry the transition."""
    return {
        "old_status": old_status,
        "new_status": new_status,
        "old_portal_status": old_portal_status,
        "new_portal_status": new_portal_status,
        "changed_at": isoformat_z(changed_at),
    }


def example_data(event_type: str, now: datetime) -> dict[str, Any]:
    """The data of a plausible event of `event_type` observed at `now`."""
    if event_type not in EVENT_TYPES:
        raise ValueError(f"unknown event type {event_type!r}")
    observed = isoformat_z(now)
    if event_type == STATUS_CHANGE:
        return status_transition(
            old_status="in_review",
            new_status="applicant_action",
            old_portal_status="Plan Check",
            new_portal_status="Corrections Issued",
            changed_at=now,
        )
    if event_type == PERMIT_APPROVED:
        return status_transition(
            old_status="approved_pending_issue",
            new_status="issued",
            old_portal_status="Ready to Issue",
            new_portal_status="Issued",
            changed_at=now,
        )
    if event_type == PERMIT_DENIED:
        return status_transition(
            old_status="issued",
            new_status="expired",
            old_portal_status="Issued",
            new_portal_status="Permit Expired",
            changed_at=now,
        )
    if event_type == CORRECTIONS_REQUIRED:
        return {
            "status": "applicant_action",
            "portal_status": "Corrections Issued",
            "flagged_at": observed,
            "open_conditions": [
                {"type": "Plan Check Correction", "description": "Provide structural calcs"}
            ],
        }
    if event_type == INSPECTION_COMPLETE:
        return {
            "inspection": {
                "type": "Final",
                "date": (now - timedelta(days=1)).date().isoformat(),
                "result": "Approved",
                "inspector": "J. Rivera",
            },
            "completed_inspections": 6,
            "observed_at": observed,
        }
    if event_type == OPERATION_COMPLETED:
        return {
            "operation_id": "7d0c2b0e-4f7e-4a43-9a57-2f3f0d9b6b1e",
            "operation_type": "permit_refresh",
            "status": "succeeded",
            "poll_url": "/api/v1/operations/7d0c2b0e-4f7e-4a43-9a57-2f3f0d9b6b1e",
            "result": {"permit_number": EXAMPLE_PERMIT_NUMBER, "status": "issued"},
            "error": None,
            "completed_at": observed,
        }
    snapshot = {
        "permit_number": EXAMPLE_PERMIT_NUMBER,
        "jurisdiction": EXAMPLE_JURISDICTION,
        "address": "1200 W 7th St, Los Angeles, CA 90017",
        "permit_type": "Bldg-Alter/Repair",
        "status": "Issued",
        "valuation": 85000.0,
        "issued_date": now.date().isoformat(),
        "applied_date": (now - timedelta(days=40)).date().isoformat(),
    }
    if event_type == CRITERIA_MATCH:
        return {
            "saved_search_id": "3b1f5a8e-2f1c-4c55-b0b4-8f4c7a1e9d20",
            "name": "New LA solar permits",
            "criteria": {"city": "Los Angeles", "permit_type": "solar"},
            "match": snapshot,
            "matched_at": observed,
        }
    assert event_type == PERMIT_CREATED
    return {"permit": snapshot, "first_observed_at": observed}
