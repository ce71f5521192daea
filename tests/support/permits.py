"""Stored representations for tests: `PermitRecord` rows written through the codec, as a
successful status lookup leaves them."""

from __future__ import annotations

from dataclasses import replace
from datetime import date, datetime
from typing import Any

from permitapi.context import AppContext
from permitapi.permit.codec import encode_snapshot
from permitapi.permit.models import PermitRecord
from permitapi.sources import detect
from permitapi.sources.base import (
    Condition,
    Inspection,
    NormalizedStatus,
    PendingInspection,
    PermitSnapshot,
    StatusEvent,
    WorkflowTask,
)
from permitapi.sources.status import NORMALIZATION_VERSION

LADBS_NUMBER = "21030-20000-00256"
LADBS_URL = "https://www.ladbsservices2.lacity.org/OnlineServices/PermitReport/PcisPermitDetail"


def full_snapshot(**overrides: Any) -> PermitSnapshot:
    """A LADBS permit with every field and detail observed."""
    snapshot = PermitSnapshot(
        jurisdiction="ladbs",
        permit_number=LADBS_NUMBER,
        raw_status="Issued",
        status=NormalizedStatus.ISSUED,
        status_date=date(2026, 10, 1),
        permit_type="Bldg-Addition",
        address="1234 W MAIN ST 90012",
        work_description="Add 200 sq ft bedroom",
        applied_date=date(2026, 3, 2),
        issued_date=date(2026, 9, 30),
        finaled_date=None,
        expires_date=date(2028, 9, 30),
        valuation=85000.0,
        inspections=[
            Inspection("Foundation", date(2026, 10, 5), "Approved", "J. Ortiz"),
            Inspection("Framing", date(2026, 10, 20), "Corrections Issued", "J. Ortiz"),
            Inspection("Framing", date(2026, 10, 27), "Partial Approval", None),
            Inspection("Insulation", date(2026, 11, 2), "Not Ready for Inspection", "K. Lee"),
        ],
        pending_inspections=[PendingInspection("Drywall", date(2026, 11, 25))],
        conditions=[
            Condition("Fire clearance", "Required", stage="Plan Check", group="Clearances"),
            Condition(
                "Planning clearance", "Cleared", stage="Plan Check", group="Clearances", is_met=True
            ),
            Condition("Soils report", "Required", stage="Issuance"),
        ],
        timeline=[
            StatusEvent("Submitted", date(2026, 3, 2)),
            StatusEvent(
                "Corrections Issued",
                datetime.fromisoformat("2026-05-01T17:30:00+00:00"),
                discipline="Building",
                is_correction=True,
                actor="Plan checker",
                comment="Provide structural calcs",
            ),
            StatusEvent("Issued", date(2026, 9, 30)),
        ],
        workflow=[
            WorkflowTask("Plan Check", "Completed", date(2026, 9, 1)),
            WorkflowTask("Final Inspection", "Pending", None),
        ],
        field_sources={"address": LADBS_URL + "#address"},
        source_url=LADBS_URL,
    )
    return replace(snapshot, **overrides)


async def store(
    ctx: AppContext,
    snapshot: PermitSnapshot,
    *,
    fetched_at: datetime | None = None,
    normalization_version: str | None = NORMALIZATION_VERSION,
) -> str:
    """Write (or replace) the stored representation; returns the permit_id."""
    jurisdiction = ctx.directory.get(snapshot.jurisdiction)
    assert jurisdiction is not None
    normalized = detect.normalize_number(jurisdiction, snapshot.permit_number)
    permit_id = str(detect.permit_id(jurisdiction.slug, normalized))
    moment = fetched_at or ctx.clock.now()
    async with ctx.transaction() as session:
        existing = await session.get(PermitRecord, permit_id)
        if existing is not None:
            await session.delete(existing)
            await session.flush()
        session.add(
            PermitRecord(
                permit_id=permit_id,
                jurisdiction=jurisdiction.slug,
                permit_number=normalized,
                display_number=snapshot.permit_number,
                raw_status=snapshot.raw_status,
                normalized_status=snapshot.status.value,
                status_date=snapshot.status_date,
                permit_type=snapshot.permit_type,
                issued_date=snapshot.issued_date,
                applied_date=snapshot.applied_date,
                snapshot=encode_snapshot(snapshot),
                normalization_version=normalization_version,
                fetched_at=moment,
                last_attempted_at=moment,
                created_at=moment,
            )
        )
    return permit_id
