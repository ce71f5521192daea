"""PCIS detail + Socrata rows -> one `PermitSnapshot` (pure; the rules are documented in
docs/decisions.md under "LADBS")."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date
from typing import Any, Generic, TypeVar

from permitapi.sources.base import (
    Condition,
    Inspection,
    NormalizedStatus,
    PendingInspection,
    PermitSnapshot,
    StatusEvent,
)
from permitapi.sources.ladbs.pcis import PcisDetail
from permitapi.sources.ladbs.socrata import PermitRow, sort_newest_first
from permitapi.sources.ladbs.status import (
    CORRECTION_EVENTS,
    FINAL_EVENTS,
    LADBS_STATUS_TABLE,
)
from permitapi.sources.status import status_key

_DONE = (NormalizedStatus.FINALED, NormalizedStatus.FINALED_CONDITIONAL, NormalizedStatus.OCCUPANCY)
_APPLIED_EVENTS = frozenset(status_key(e) for e in ("Submitted", "Application Submittal"))


T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class Sourced(Generic[T]):
    """A value and the URL it was read from."""

    value: T
    url: str


def _status_date(detail: PcisDetail) -> date | None:
    """Current Status date; when the page prints "<status> on" with no date, the date of the
    latest history event with the same status (the page's own record of that change)."""
    if detail.current_status_date is not None:
        return detail.current_status_date
    wanted = status_key(detail.current_status)
    dates = [e.date for e in detail.history if e.date and status_key(e.event) == wanted]
    return max(dates) if dates else None


def _finaled_date(
    detail: PcisDetail, status: NormalizedStatus, status_date: date | None
) -> date | None:
    """Only final statuses carry a final date: the latest final-type history event, else the
    Current Status date when the status itself is a final event. "Permit Closed" without a
    final event gets none (we do not invent one)."""
    if status not in _DONE:
        return None
    dates = [e.date for e in detail.history if e.date and status_key(e.event) in FINAL_EVENTS]
    if dates:
        return max(dates)
    return status_date if status_key(detail.current_status) in FINAL_EVENTS else None


def _applied_date(detail: PcisDetail, row: PermitRow | None) -> date | None:
    if row is not None and row.submitted_date is not None:
        return row.submitted_date
    dates = [e.date for e in detail.history if e.date and status_key(e.event) in _APPLIED_EVENTS]
    return min(dates) if dates else None


def build_snapshot(
    jurisdiction: str,
    detail: PcisDetail,
    detail_url: str,
    row: Sourced[PermitRow] | None,
    socrata_inspections: Sourced[list[Inspection]] | None,
) -> PermitSnapshot:
    """Reconcile the sources. The PCIS page is live and authoritative for everything it shows
    (status, dates, history, clearances, inspections); Socrata fills what the page never
    carries (valuation, parcel, coordinates, submitted date) and stands in for an empty
    inspection history."""
    sources: dict[str, str] = {}
    permit_row = row.value if row is not None else None

    def take(name: str, pcis_value: Any, socrata_value: Any) -> Any:
        if pcis_value is not None:
            sources[name] = detail_url
            return pcis_value
        if socrata_value is not None and row is not None:
            sources[name] = row.url
            return socrata_value
        return None

    raw_status = detail.current_status
    sources["raw_status"] = sources["status"] = detail_url
    status = LADBS_STATUS_TABLE.normalize(raw_status)
    status_date = take("status_date", _status_date(detail), None)

    inspections: list[Inspection] | None
    if detail.inspections:
        inspections = sort_newest_first(
            Inspection(i.type, i.date, i.result, i.inspector) for i in detail.inspections
        )
        sources["inspections"] = detail_url
    elif socrata_inspections is not None and socrata_inspections.value:
        inspections = socrata_inspections.value
        sources["inspections"] = socrata_inspections.url
    elif "inspection request history" in detail.sections:
        inspections = []
        sources["inspections"] = detail_url
    else:
        inspections = None
    # Research §4.3: an issued permit with inspection activity is in its inspection phase.
    if status is NormalizedStatus.ISSUED and inspections:
        status = NormalizedStatus.INSPECTIONS

    pending = conditions = timeline = None
    if "pending inspections" in detail.sections:
        pending = [PendingInspection(p.type, p.date) for p in detail.pending]
        sources["pending_inspections"] = detail_url
    if "permit application clearance information" in detail.sections:
        conditions = [
            Condition(
                name=c.name,
                status=c.status,
                # the fourth column names the department while a clearance is outstanding and
                # the clearing staff member afterwards; only the department is a group
                group=None if c.status.casefold() == "cleared" else c.responsible,
                is_met=c.status.casefold() == "cleared",
                status_date=c.date,
            )
            for c in detail.clearances
        ]
        sources["conditions"] = detail_url
    if "permit application status history" in detail.sections:
        timeline = [
            StatusEvent(
                status=e.event,
                changed_at=e.date,
                is_correction=status_key(e.event) in CORRECTION_EVENTS,
                actor=e.person,
            )
            for e in detail.history
        ]
        sources["timeline"] = detail_url

    finaled = take("finaled_date", _finaled_date(detail, status, status_date), None)
    expires = take(
        "expires_date", status_date if status is NormalizedStatus.EXPIRED else None, None
    )
    applied = _applied_date(detail, permit_row)
    if applied is not None:
        from_row = permit_row is not None and permit_row.submitted_date == applied
        sources["applied_date"] = row.url if from_row and row is not None else detail_url
    return PermitSnapshot(
        jurisdiction=jurisdiction,
        permit_number=detail.permit_number,
        raw_status=raw_status,
        status=status,
        status_date=status_date,
        permit_type=take("permit_type", detail.permit_type, _get(permit_row, "permit_type")),
        address=take("address", detail.address, permit_row.address if permit_row else None),
        work_description=take(
            "work_description", detail.work_description, _get(permit_row, "work_desc")
        ),
        applied_date=applied,
        issued_date=take("issued_date", detail.issued_date, _get(permit_row, "issue_date")),
        finaled_date=finaled,
        expires_date=expires,
        valuation=take("valuation", None, _get(permit_row, "valuation")),
        parcel=take("parcel", None, _get(permit_row, "apn")),
        latitude=take("latitude", None, _get(permit_row, "latitude")),
        longitude=take("longitude", None, _get(permit_row, "longitude")),
        inspections=inspections,
        pending_inspections=pending,
        conditions=conditions,
        timeline=timeline,
        workflow=None,  # PCIS publishes no workflow tasks
        field_sources=sources,
        source_url=detail_url,
    )


def _get(row: PermitRow | None, name: str) -> Any:
    return getattr(row, name) if row is not None else None
