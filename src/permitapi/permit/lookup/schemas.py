"""API shapes of the status and batch endpoints (documentation and request parsing; answers
are rendered from plain dicts on the hot path)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from permitapi.kit.schema_types import Timestamp
from permitapi.permit.operation.schemas import OperationOut
from permitapi.web.openapi import Problem


class DataFreshness(BaseModel):
    age_seconds: int = Field(description="Seconds since the data was fetched from the portal")
    cached: bool = Field(description="False only when this request fetched the portal live")
    refresh_available: bool = Field(description="force_refresh allowed: true on paid plans")
    fetched_at: Timestamp
    last_successful_fetch_at: Timestamp
    last_attempted_fetch_at: Timestamp
    is_stale: bool = Field(description="True when a portal failure forced a last-known answer")
    stale_reason: str | None = Field(
        description="source_timeout, source_unavailable, source_maintenance, source_throttled, "
        "source_blocked, source_changed or source_error; null unless is_stale"
    )
    next_refresh_at: Timestamp = Field(
        description="When an ordinary lookup will next fetch the portal (cache expiry, or the "
        "end of the failure backoff for stale answers)"
    )


class PermitStatus(BaseModel):
    permit_number: str
    permit_id: str = Field(description="Canonical permit UUID")
    jurisdiction: str
    jurisdiction_display: str
    status: str = Field(description="Portal status text (whitespace tidied)")
    portal_status: str = Field(description="Raw portal status, exactly as published")
    status_phase: Literal["pending", "active", "closed", "terminated", "unknown"]
    permit_type: str | None
    address: str | None
    work_description: str | None
    source: Literal["cached", "live_scrape", "stale_cache"]
    last_synced_at: Timestamp
    data_freshness: DataFreshness


class JurisdictionCandidate(BaseModel):
    """One jurisdiction an ambiguous number could belong to (300 and 404 problem bodies of the
    status, resolution and detail endpoints alike)."""

    slug: str
    display_name: str
    confidence: Literal["strong", "weak", "none"]
    reason: str
    permit_number: str = Field(description="The number normalised for this jurisdiction")
    permit_id: str = Field(description="The canonical permit_id this choice produces")


class MultipleJurisdictionsProblem(Problem):
    """HTTP 300 multiple_jurisdictions: every candidate, ranked strongest first (previously
    looked-up jurisdictions first); none are dropped."""

    permit_number: str = Field(description="The number as given")
    candidates: list[JurisdictionCandidate]
    example: str | None = Field(
        default=None,
        description="The request path with the first candidate's jurisdiction (status and "
        "detail endpoints; absent for resolutions)",
    )


class BatchRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")

    permit_numbers: list[str] = Field(description="1 to 25 permit numbers")


class BatchError(BaseModel):
    permit_number: str
    error: str = Field(
        description="not_found, jurisdiction_not_supported, multiple_jurisdictions, "
        "upstream_timeout, upstream_unavailable or invalid_permit_number"
    )
    message: str
    jurisdiction_hint: str | None
    status_code: int
    retryable: bool


class BatchResult(BaseModel):
    """The status record, as GET status returns it."""

    model_config = ConfigDict(extra="allow")

    permit_number: str
    jurisdiction: str
    jurisdiction_display: str
    status: str
    status_phase: str
    source: str
    last_synced_at: Timestamp
    data_freshness: DataFreshness


class BatchResponse(BaseModel):
    results: list[BatchResult]
    errors: list[BatchError]
    operations: list[OperationOut]
