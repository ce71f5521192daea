"""API shapes of the usage endpoint."""

from __future__ import annotations

from pydantic import BaseModel, Field

from permitapi.kit.schema_types import Timestamp


class MeterUsage(BaseModel):
    used: int = Field(description="Units used this month; above `limit` they are overage units.")
    limit: int | None = Field(description="Included units this month; null for sandbox keys.")
    remaining: int | None = Field(description="Included units left; stays 0 during overage.")
    percent_used: float | None
    metered: bool
    enabled: bool


class UsageResponse(BaseModel):
    plan: str
    is_sandbox: bool
    period_start: str
    resets_at: Timestamp
    overage_enabled: bool
    lookup: MeterUsage
    discovery: MeterUsage
