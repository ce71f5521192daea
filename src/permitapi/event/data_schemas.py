"""The typed `data` of each event (the table "Event data" in docs/decisions.md), for the
OpenAPI document: its `webhooks` section and the events feed's `FeedEvent`, discriminated by
the event name. The producers build their data with `event/examples.py`'s helpers; a test holds
every example to these models. Fields a producer may leave unknown are nullable, and extra
fields are allowed (the table may grow)."""

from __future__ import annotations

from typing import Any, Final, Literal

from pydantic import BaseModel, ConfigDict, Field

from permitapi.event.service import (
    CORRECTIONS_REQUIRED,
    CRITERIA_MATCH,
    INSPECTION_COMPLETE,
    OPERATION_COMPLETED,
    PERMIT_APPROVED,
    PERMIT_CREATED,
    PERMIT_DENIED,
    STATUS_CHANGE,
)
from permitapi.kit.schema_types import Moment, Timestamp


class _Data(BaseModel):
    model_config = ConfigDict(extra="allow")


class StatusTransitionData(_Data):
    """status_change, permit_approved, permit_denied."""

    old_status: str | None = Field(description="Normalised status before; null when unknown")
    new_status: str = Field(description="Normalised status now")
    old_portal_status: str | None = Field(description="The portal's text before")
    new_portal_status: str = Field(description="The portal's text now")
    changed_at: Timestamp = Field(description="When the change was observed")


class OpenCondition(_Data):
    type: str
    description: str | None


class CorrectionsRequiredData(_Data):
    status: str = Field(description="Normalised status")
    portal_status: str = Field(description="The portal's text")
    flagged_at: Timestamp
    open_conditions: list[OpenCondition]


class Inspection(_Data):
    type: str
    date: Moment | None
    result: str | None
    inspector: str | None


class InspectionCompleteData(_Data):
    inspection: Inspection
    completed_inspections: int = Field(description="Completed inspections now on record")
    observed_at: Timestamp


class OperationCompletedData(_Data):
    operation_id: str
    operation_type: Literal["permit_refresh"]
    status: Literal["succeeded", "failed"]
    poll_url: str
    result: dict[str, Any] | None = Field(description="As in GET /operations/{id}")
    error: dict[str, Any] | None
    completed_at: Timestamp | None


class DiscoveryHit(_Data):
    permit_number: str
    jurisdiction: str
    address: str | None
    permit_type: str | None
    status: str | None
    valuation: float | None
    issued_date: str | None = Field(description="YYYY-MM-DD")
    applied_date: str | None = Field(description="YYYY-MM-DD")


class CriteriaMatchData(_Data):
    saved_search_id: str
    name: str
    criteria: dict[str, Any] = Field(description="The saved search's discovery filters")
    match: DiscoveryHit
    matched_at: Timestamp


class PermitCreatedData(_Data):
    permit: DiscoveryHit
    first_observed_at: Timestamp


EVENT_DATA: Final[dict[str, type[BaseModel]]] = {
    STATUS_CHANGE: StatusTransitionData,
    PERMIT_APPROVED: StatusTransitionData,
    PERMIT_DENIED: StatusTransitionData,
    CORRECTIONS_REQUIRED: CorrectionsRequiredData,
    INSPECTION_COMPLETE: InspectionCompleteData,
    OPERATION_COMPLETED: OperationCompletedData,
    CRITERIA_MATCH: CriteriaMatchData,
    PERMIT_CREATED: PermitCreatedData,
}
