"""API shape of an operation."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field

from permitapi.kit.schema_types import Timestamp


class OperationError(BaseModel):
    code: str = Field(description="jurisdiction_unavailable, source_changed, ...")
    message: str
    retryable: bool


class OperationOut(BaseModel):
    operation_id: str
    operation_type: Literal["permit_refresh"]
    status: Literal["pending", "running", "succeeded", "failed"]
    poll_url: str
    created_at: Timestamp
    started_at: Timestamp | None
    completed_at: Timestamp | None
    result: dict[str, Any] | None = Field(
        description="When succeeded: the permit status record, or for a portal-confirmed "
        "missing permit the permit_not_found problem body (status 404)"
    )
    error: OperationError | None
