"""Assemble a `PermitSnapshot` from the parsed ACA pages. Pure: no I/O.

Where each date comes from (ACA's record page prints none of them):
- applied_date: the results grid's first column ("Date"/"Opened Date") when a grid was seen;
  after a one-result redirect there is no grid, so the earliest workflow event is used.
- status_date: the latest dated workflow event.
- issued_date: the earliest "Issued"-class event of an issuance task (name contains "issu").
- finaled_date: only on a final record status (§4.4 rule 4): the latest final-class event.
- expires_date: the record header's "Expiration Date:", else the grid's Expiration Date column
  when a grid was seen, else not observed.
"""

from __future__ import annotations

from dataclasses import dataclass

from permitapi.sources.aca.detail import MET_CONDITION_STATUSES, CapDetail
from permitapi.sources.aca.inspections import InspectionLists
from permitapi.sources.aca.processing import ProcessingTask
from permitapi.sources.aca.results import ResultRow
from permitapi.sources.aca.status import table_for
from permitapi.sources.base import (
    Condition,
    Inspection,
    NormalizedStatus,
    PendingInspection,
    PermitSnapshot,
    StatusEvent,
    WorkflowTask,
)
from permitapi.sources.status import status_key

FINAL_STATUSES = frozenset(
    {NormalizedStatus.FINALED, NormalizedStatus.FINALED_CONDITIONAL, NormalizedStatus.OCCUPANCY}
)


@dataclass(frozen=True, slots=True)
class Provenance:
    """Real portal URLs each part was read from."""

    search_url: str
    detail_url: str
    processing_url: str
    inspections_url: str | None


def timeline_of(tasks: list[ProcessingTask]) -> list[StatusEvent]:
    """Every task event, oldest first; undated (TBD) events keep page order at the end."""
    events = [
        StatusEvent(status=event.status, changed_at=event.on, discipline=task.name, actor=event.by)
        for task in tasks
        for event in task.events
    ]
    return sorted(events, key=lambda e: (e.changed_at is None, e.changed_at or 0))


def build_snapshot(
    slug: str,
    detail: CapDetail,
    row: ResultRow | None,
    tasks: list[ProcessingTask] | None,
    inspections: InspectionLists | None,
    where: Provenance,
    processing_unavailable: str | None = None,
) -> PermitSnapshot:
    """`tasks` None: the Processing Status could not be read (`processing_unavailable` says
    why); timeline and workflow are then not observed and the dates drawn from them unknown."""
    observed_tasks = tasks is not None
    tasks = tasks or []
    table = table_for(slug)
    status = table.normalize(detail.status)
    timeline = timeline_of(tasks)
    dated = [e.changed_at for e in timeline if e.changed_at is not None]
    issued = [
        event.on
        for task in tasks
        if "issu" in task.name.casefold()
        for event in task.events
        if event.on is not None and table.normalize(event.status) is NormalizedStatus.ISSUED
    ]
    finals = [
        event.on
        for task in tasks
        for event in task.events
        if event.on is not None and table.normalize(event.status) in FINAL_STATUSES
    ]
    sources = {
        name: where.detail_url
        for name in (
            "permit_number", "raw_status", "status", "permit_type", "address", "parcel",
            "valuation", "work_description", "conditions",
        )
    }  # fmt: skip
    sources.update({name: where.processing_url for name in ("timeline", "workflow", "status_date")})
    sources["issued_date"] = sources["finaled_date"] = where.processing_url
    sources["applied_date"] = where.search_url if row is not None else where.processing_url
    if detail.expires is not None:
        sources["expires_date"] = where.detail_url
    elif row is not None:
        sources["expires_date"] = where.search_url
    if inspections is not None and where.inspections_url:
        sources["inspections"] = sources["pending_inspections"] = where.inspections_url
    return PermitSnapshot(
        jurisdiction=slug,
        permit_number=detail.permit_number,
        raw_status=detail.status,
        status=status,
        status_date=max(dated) if dated else None,
        permit_type=detail.record_type,
        address=detail.address,
        work_description=detail.description,
        applied_date=row.date if row is not None and row.date else min(dated, default=None),
        issued_date=min(issued, default=None),
        finaled_date=max(finals, default=None) if status in FINAL_STATUSES else None,
        expires_date=detail.expires or (row.expiration_date if row is not None else None),
        valuation=detail.job_value,
        parcel=detail.parcel,
        inspections=None
        if inspections is None
        else [
            Inspection(type=i.type, date=i.date, result=i.status, inspector=i.inspector)
            for i in inspections.completed
        ],
        pending_inspections=None
        if inspections is None
        else [PendingInspection(type=i.type, date=i.date) for i in inspections.upcoming],
        conditions=[
            Condition(
                name=c.name,
                status=c.status,
                group=c.group,
                is_met=status_key(c.status) in MET_CONDITION_STATUSES,
                status_date=c.status_date,
            )
            for c in detail.conditions
        ],
        timeline=timeline if observed_tasks else None,
        workflow=[WorkflowTask(t.name, t.status, t.completed_at) for t in tasks]
        if observed_tasks
        else None,
        field_sources=sources,
        source_url=where.detail_url,
        unavailable={"timeline": processing_unavailable, "workflow": processing_unavailable}
        if not observed_tasks and processing_unavailable
        else {},
    )
