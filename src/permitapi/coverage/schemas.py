"""API shapes of GET /jurisdictions/coverage."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

CapabilityValue = Literal["available", "partial", "unavailable"]


class Capabilities(BaseModel):
    status_lookup: CapabilityValue
    inspections: CapabilityValue
    workflow_history: CapabilityValue
    discovery: CapabilityValue
    conditions: CapabilityValue


class FieldCoverage(BaseModel):
    field: str
    tier: Literal["reliable", "partial", "missing", "unknown"] = Field(
        description="reliable: at least 80 % of sampled lookups held the field; partial: more "
        "than 0 and less than 80 %; missing: sampled, never present; unknown: no sample"
    )
    fill_rate: float | None = Field(description="records_present / sample_size, 0..1; null")
    records_present: int
    sample_size: int = Field(description="Successful lookups in the window that recorded it")


class DataRelease(BaseModel):
    mode: Literal["continuous"]
    sample_size: int = Field(description="Successful lookups observed in the window")
    observed_from: str | None
    observed_through: str | None


class JurisdictionCoverage(BaseModel):
    slug: str
    display_name: str
    capabilities: Capabilities
    field_coverage: list[FieldCoverage]
    data_release: DataRelease


class CoverageResponse(BaseModel):
    sample_window_days: int
    jurisdictions: list[JurisdictionCoverage]
