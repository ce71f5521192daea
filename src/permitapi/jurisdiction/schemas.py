"""API shapes of the jurisdiction endpoints."""

from __future__ import annotations

from datetime import date

from pydantic import BaseModel, Field


class JurisdictionSummary(BaseModel):
    slug: str
    display_name: str
    platform: str
    state: str
    active_permits_count: int


class JurisdictionList(BaseModel):
    jurisdictions: list[JurisdictionSummary]
    total: int


class DateRange(BaseModel):
    earliest: date | None = Field(description="Earliest application or issue date observed")
    latest: date | None = Field(description="Latest application or issue date observed")


class JurisdictionStats(BaseModel):
    slug: str
    display_name: str
    active_permits_count: int = Field(
        description="Observed permits in the pipeline or issued and not finaled, expired or "
        "cancelled"
    )
    date_range: DateRange


class JurisdictionAnalytics(BaseModel):
    jurisdiction: str
    display_name: str
    median_processing_days: int | None = Field(
        description="Median days from application to issue; null with fewer than 5 intervals"
    )
    sample_size: int = Field(description="Permits with both dates used for the median")
    permit_count: int = Field(description="Permits observed by the service")
    permits_by_type: dict[str, int]
    date_range: DateRange
