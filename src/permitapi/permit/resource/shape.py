"""The canonical permit resource and the detail views, shaped from the latest successful
representation (`permits.snapshot`). Pure functions: the caller reads the row.

Every value of the resource carries provenance. `not_observed` means the latest representation
lacks the field; it is not a claim that the agency has no value.
"""

from __future__ import annotations

from collections import OrderedDict
from datetime import date, datetime
from typing import Literal

from permitapi.kit.clock import isoformat_z
from permitapi.permit.codec import decode_snapshot
from permitapi.permit.identity.service import permit_path, resource_path
from permitapi.permit.lookup.schemas import DataFreshness
from permitapi.permit.models import PermitRecord
from permitapi.permit.resource import inspection_results
from permitapi.permit.resource.schemas import (
    ConditionGroup,
    ConditionItem,
    ConditionsLink,
    ConditionsResponse,
    ConditionsSummary,
    HistoryResponse,
    InspectionItem,
    InspectionsResponse,
    Observed,
    PendingInspectionItem,
    PermitResource,
    Provenance,
    ResourceDates,
    ResourceLinks,
    StatusValue,
    TimelineEntry,
    WorkflowItem,
)
from permitapi.sources.base import NormalizedStatus, PermitSnapshot
from permitapi.sources.registry import Directory

UNGROUPED = "General"


def _observed_at(record: PermitRecord) -> str:
    moment = record.fetched_at or record.created_at
    return isoformat_z(moment)


def _moment(value: date | datetime | None) -> str | None:
    if value is None:
        return None
    if isinstance(value, datetime):
        return isoformat_z(value) if value.tzinfo else value.isoformat()
    return value.isoformat()


class _Shaper:
    def __init__(self, record: PermitRecord, snapshot: PermitSnapshot, source_system: str):
        self.record = record
        self.snapshot = snapshot
        self.source_system = source_system
        self.observed_at = _observed_at(record)

    def provenance(
        self,
        name: str,
        available: bool,
        confidence: Literal["normalized", "unmapped"] = "normalized",
    ) -> Provenance:
        return Provenance(
            source_system=self.source_system,
            observed_at=self.observed_at,
            normalization_version=self.record.normalization_version,
            confidence=confidence if available else None,
            availability="available" if available else "not_observed",
            source_url=self.snapshot.field_sources.get(name) or self.snapshot.source_url,
        )

    def text(self, name: str) -> Observed:
        value = getattr(self.snapshot, name)
        available = isinstance(value, str) and value.strip() != ""
        return Observed(
            value=value if available else None,
            raw_value=value if available else None,
            provenance=self.provenance(name, available),
        )

    def parsed(self, name: str) -> Observed:
        """Dates and amounts: the snapshot keeps only the parsed value, not the page text."""
        value = getattr(self.snapshot, name)
        shown = value.isoformat() if isinstance(value, date) else value
        return Observed(
            value=shown, raw_value=None, provenance=self.provenance(name, value is not None)
        )

    def status(self) -> StatusValue:
        raw = self.snapshot.raw_status or None
        unmapped = self.snapshot.status is NormalizedStatus.UNKNOWN
        return StatusValue(
            value=self.snapshot.status.value,
            raw_value=raw,
            provenance=self.provenance(
                "status", raw is not None, "unmapped" if unmapped else "normalized"
            ),
        )


def snapshot_of(record: PermitRecord) -> PermitSnapshot:
    assert record.snapshot is not None  # callers only pass rows with a representation
    return decode_snapshot(record.snapshot)


def _source_system(directory: Directory, record: PermitRecord) -> str:
    jurisdiction = directory.get(record.jurisdiction)
    return jurisdiction.platform if jurisdiction else "unknown"


def _display(directory: Directory, slug: str) -> str:
    jurisdiction = directory.get(slug)
    return jurisdiction.display_name if jurisdiction else slug


def canonical_resource(
    directory: Directory, record: PermitRecord, freshness: DataFreshness
) -> PermitResource:
    snapshot = snapshot_of(record)
    shaper = _Shaper(record, snapshot, _source_system(directory, record))
    number, slug = record.permit_number, record.jurisdiction
    conditions_href = permit_path(number, "conditions", slug)
    return PermitResource(
        permit_id=record.permit_id,
        permit_number=number,
        jurisdiction=slug,
        jurisdiction_display=_display(directory, slug),
        observed_at=shaper.observed_at,
        status=shaper.status(),
        permit_type=shaper.text("permit_type"),
        address=shaper.text("address"),
        work_description=shaper.text("work_description"),
        valuation=shaper.parsed("valuation"),
        dates=ResourceDates(
            applied=shaper.parsed("applied_date"),
            issued=shaper.parsed("issued_date"),
            finaled=shaper.parsed("finaled_date"),
            expires=shaper.parsed("expires_date"),
            status_date=shaper.parsed("status_date"),
        ),
        conditions=ConditionsLink(
            count=len(snapshot.conditions or []),
            observed=snapshot.conditions is not None,
            href=conditions_href,
        ),
        links=ResourceLinks(
            self=resource_path(record.permit_id),
            status=permit_path(number, "status", slug),
            inspections=permit_path(number, "inspections", slug),
            conditions=conditions_href,
            history=permit_path(number, "history", slug),
        ),
        data_freshness=freshness,
    )


def inspections_view(
    directory: Directory, record: PermitRecord, freshness: DataFreshness
) -> InspectionsResponse:
    snapshot = snapshot_of(record)
    done = snapshot.inspections or []
    return InspectionsResponse(
        permit_number=record.permit_number,
        jurisdiction=record.jurisdiction,
        observed=snapshot.inspections is not None,
        observed_at=_observed_at(record),
        inspections=[
            InspectionItem(
                type=i.type, date=_moment(i.date), result=i.result, inspector=i.inspector
            )
            for i in done
        ],
        pending=[
            PendingInspectionItem(type=p.type, date=_moment(p.date))
            for p in snapshot.pending_inspections or []
        ],
        pass_rate=inspection_results.pass_rate(
            [i.result for i in done], _source_system(directory, record)
        ),
        data_freshness=freshness,
    )


def conditions_view(record: PermitRecord, freshness: DataFreshness) -> ConditionsResponse:
    snapshot = snapshot_of(record)
    conditions = snapshot.conditions or []
    groups: OrderedDict[str, list[int]] = OrderedDict()
    for condition in conditions:
        counts = groups.setdefault(condition.group or UNGROUPED, [0, 0])
        counts[1 if condition.is_met else 0] += 1
    met = sum(1 for c in conditions if c.is_met)
    return ConditionsResponse(
        permit_number=record.permit_number,
        jurisdiction=record.jurisdiction,
        observed=snapshot.conditions is not None,
        observed_at=_observed_at(record),
        summary=ConditionsSummary(total=len(conditions), required=len(conditions) - met, met=met),
        groups=[
            ConditionGroup(name=name, outstanding=outstanding, complete=complete)
            for name, (outstanding, complete) in groups.items()
        ],
        items=[
            ConditionItem(name=c.name, status=c.status, stage=c.stage, group=c.group)
            for c in conditions
        ],
        data_freshness=freshness,
    )


def history_view(record: PermitRecord, freshness: DataFreshness) -> HistoryResponse:
    snapshot = snapshot_of(record)
    return HistoryResponse(
        permit_number=record.permit_number,
        jurisdiction=record.jurisdiction,
        observed=snapshot.timeline is not None,
        unavailable_reason=snapshot.unavailable.get("timeline")
        if snapshot.timeline is None
        else None,
        observed_at=_observed_at(record),
        timeline=[
            TimelineEntry(
                status=e.status,
                changed_at=_moment(e.changed_at),
                is_correction=e.is_correction,
                discipline=e.discipline or None,
                actor=e.actor or None,
                comment=e.comment or None,
            )
            for e in snapshot.timeline or []
        ],
        workflow=[
            WorkflowItem(name=t.name, status=t.status, completed_at=_moment(t.completed_at))
            for t in snapshot.workflow or []
        ],
        data_freshness=freshness,
    )
