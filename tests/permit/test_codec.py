"""The snapshot codec round-trips every field, including nested lists and date precision."""

from __future__ import annotations

from datetime import UTC, date, datetime

from permitapi.permit.codec import decode_snapshot, encode_snapshot
from permitapi.sources.base import (
    Condition,
    Inspection,
    NormalizedStatus,
    PendingInspection,
    PermitSnapshot,
    StatusEvent,
    WorkflowTask,
)


def test_snapshot_round_trip() -> None:
    snapshot = PermitSnapshot(
        jurisdiction="ladbs",
        permit_number="16041-10000-23545",
        raw_status="Permit Finaled",
        status=NormalizedStatus.FINALED,
        status_date=date(2018, 8, 8),
        permit_type="Electrical",
        address="123 Main St",
        valuation=1500.0,
        inspections=[Inspection("Final", date(2018, 8, 7), "Approved", "J. Doe")],
        pending_inspections=[PendingInspection("Rough", None)],
        conditions=[Condition("Fire", "Cleared", status_date=date(2026, 2, 19), is_met=True)],
        timeline=[
            StatusEvent("Issued", date(2016, 7, 6)),
            StatusEvent("Corrections", datetime(2017, 1, 2, 3, 4, tzinfo=UTC), is_correction=True),
        ],
        workflow=[WorkflowTask("Plan Review", "Complete", date(2016, 6, 1))],
        field_sources={"status": "https://example.org/x"},
    )
    assert decode_snapshot(encode_snapshot(snapshot)) == snapshot


def test_not_observed_lists_stay_none() -> None:
    snapshot = PermitSnapshot("epicla", "CREB2025000372", "Open", NormalizedStatus.ISSUED)
    decoded = decode_snapshot(encode_snapshot(snapshot))
    assert decoded.inspections is None
    assert decoded.conditions is None
    assert decoded == snapshot
