"""API shapes of the public source status page."""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from pydantic import BaseModel, Field


class CanaryResult(BaseModel):
    checked_at: datetime
    outcome: Literal["ok", "drift", "unreached"] = Field(
        description="The daily drift canary's verdict on this portal's known public records"
    )
    detail: str | None = Field(description="Which expected fields went missing or changed")


class JurisdictionHealth(BaseModel):
    slug: str
    display_name: str
    platform: str
    status: Literal["operational", "degraded", "down"]
    last_success_at: datetime | None
    last_failure_at: datetime | None
    last_failure_reason: str | None = Field(
        description="Machine-readable reason of the latest failure"
    )
    error_rate: float | None = Field(
        description="Failed share of fetches in the window; null without fetches"
    )
    sample_size: int = Field(description="Fetches recorded in the window")
    consecutive_failures: int
    circuit_state: Literal["closed", "open", "half_open"]
    canary: CanaryResult | None = Field(
        default=None, description="Latest drift canary verdict; null before its first run"
    )


class StatusPage(BaseModel):
    generated_at: datetime
    window_seconds: int
    summary: dict[str, int]
    jurisdictions: list[JurisdictionHealth]
