"""API shapes of resolutions, the canonical permit resource and the detail endpoints."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field, model_serializer

from permitapi.kit.schema_types import Moment, Timestamp
from permitapi.permit.lookup.schemas import DataFreshness

Availability = Literal["available", "not_observed"]


class ResolutionRequest(BaseModel):
    model_config = {"extra": "forbid"}

    permit_number: str = Field(min_length=1, max_length=64)
    jurisdiction: str | None = Field(
        default=None,
        max_length=64,
        description="Jurisdiction slug; may be omitted only for distinctive number formats.",
    )


class Resolution(BaseModel):
    permit_id: str = Field(description="uuid5 of jurisdiction and normalised number; immutable")
    permit_number: str = Field(description="The normalised permit number")
    jurisdiction: str
    jurisdiction_display: str
    confidence: Literal["explicit", "detected", "previously_looked_up"] = Field(
        description="explicit: jurisdiction given; detected: the format is specific to one "
        "jurisdiction; previously_looked_up: the format is shared but this number was looked "
        "up in exactly one jurisdiction before"
    )
    resource_available: bool
    resource_url: str
    status_url: str | None = Field(
        default=None,
        description="Present when resource_available is false; calling it creates the resource",
    )


class Provenance(BaseModel):
    source_system: str = Field(description="Portal family the value was read from")
    observed_at: Timestamp = Field(description="When the representation holding it was fetched")
    normalization_version: str | None
    confidence: Literal["normalized", "unmapped"] | None = Field(
        description="normalized: parsed (and for status mapped) by our rules; unmapped: a raw "
        "status no mapping table knows (value is `unknown`); null when not observed"
    )
    availability: Availability
    source_url: str | None = Field(description="Where the value was read (or looked for)")


class Observed(BaseModel):
    value: Any = Field(description="Null when availability is not_observed")
    raw_value: str | None = Field(
        description="The text as published, when kept; null for parsed dates and amounts"
    )
    provenance: Provenance


class StatusValue(Observed):
    value: str


class ResourceDates(BaseModel):
    applied: Observed
    issued: Observed
    finaled: Observed
    expires: Observed
    status_date: Observed


class ConditionsLink(BaseModel):
    count: int = Field(description="Conditions in the latest representation (0 if not observed)")
    observed: bool
    href: str


class ResourceLinks(BaseModel):
    self: str
    status: str
    inspections: str
    conditions: str
    history: str


class PermitResource(BaseModel):
    permit_id: str
    permit_number: str
    jurisdiction: str
    jurisdiction_display: str
    observed_at: Timestamp = Field(
        description="When the latest successful representation was fetched"
    )
    status: StatusValue
    permit_type: Observed
    address: Observed
    work_description: Observed
    valuation: Observed = Field(description="Declared valuation in dollars")
    dates: ResourceDates = Field(description="Date values are YYYY-MM-DD")
    conditions: ConditionsLink
    links: ResourceLinks
    data_freshness: DataFreshness = Field(
        description="As in the status record, for the stored representation this answer reads"
    )


class InspectionItem(BaseModel):
    type: str
    date: str | None
    result: str | None
    inspector: str | None


class PendingInspectionItem(BaseModel):
    type: str
    date: str | None


class InspectionsResponse(BaseModel):
    permit_number: str
    jurisdiction: str
    observed: bool = Field(description="false: the representation had no inspection detail")
    observed_at: Timestamp
    inspections: list[InspectionItem]
    pending: list[PendingInspectionItem]
    pass_rate: float | None = Field(
        description="Passed / completed (passed + failed), 0..1, 3 decimals; null when none"
    )
    data_freshness: DataFreshness = Field(
        description="As in the status record, for the stored representation this answer reads"
    )


class ConditionsSummary(BaseModel):
    total: int
    required: int = Field(description="Not yet met")
    met: int


class ConditionGroup(BaseModel):
    name: str
    outstanding: int
    complete: int


class ConditionItem(BaseModel):
    name: str
    status: str
    stage: str | None
    group: str | None


class ConditionsResponse(BaseModel):
    permit_number: str
    jurisdiction: str
    observed: bool = Field(
        description="false: the stored representation had no condition detail; it does not "
        "prove there are none"
    )
    observed_at: Timestamp
    summary: ConditionsSummary
    groups: list[ConditionGroup]
    items: list[ConditionItem]
    data_freshness: DataFreshness = Field(
        description="As in the status record, for the stored representation this answer reads"
    )


class TimelineEntry(BaseModel):
    status: str
    changed_at: Moment | None = Field(description="Timestamp, or YYYY-MM-DD when date-only")
    is_correction: bool
    discipline: str | None = Field(default=None, description="Absent when not published")
    actor: str | None = Field(default=None, description="Absent when not published")
    comment: str | None = Field(default=None, description="Absent when not published")

    @model_serializer(mode="wrap")
    def _omit_unpublished(self, handler: Any) -> dict[str, Any]:
        data: dict[str, Any] = handler(self)
        for name in ("discipline", "actor", "comment"):
            if data.get(name) is None:
                data.pop(name, None)
        return data


class WorkflowItem(BaseModel):
    name: str
    status: str
    completed_at: Moment | None


class HistoryResponse(BaseModel):
    permit_number: str
    jurisdiction: str
    observed: bool = Field(description="false: the representation had no status history")
    unavailable_reason: str | None = Field(
        None,
        description="When observed is false because the portal could not give the history on "
        "the latest fetch (e.g. its processing-status request failed): why. Null otherwise",
    )
    observed_at: Timestamp
    timeline: list[TimelineEntry] = Field(description="In the order the portal publishes it")
    workflow: list[WorkflowItem]
    data_freshness: DataFreshness = Field(
        description="As in the status record, for the stored representation this answer reads"
    )
