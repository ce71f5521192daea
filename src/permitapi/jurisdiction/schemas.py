"""API shapes of the jurisdiction endpoints."""

from __future__ import annotations

from datetime import date
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

RequestStatus = Literal["open", "investigating", "pending"]


class JurisdictionSummary(BaseModel):
    slug: str
    display_name: str
    platform: str
    state: str
    active_permits_count: int


class JurisdictionList(BaseModel):
    jurisdictions: list[JurisdictionSummary]
    total: int


class JurisdictionRequestBody(BaseModel):
    model_config = ConfigDict(extra="forbid")

    jurisdiction_name: str = Field(
        description="City or county name: letters (accented ones included), spaces and "
        "`. ' -`, at most 100 characters after spacing is tidied; case and spacing do not "
        "matter. Anything else is 400 invalid_jurisdiction_name.",
        examples=["San Jose"],
    )
    state: str = Field(description="Two-letter US state or territory code", examples=["CA"])


class RequestedJurisdiction(BaseModel):
    jurisdiction_name: str
    state_code: str
    request_count: int = Field(description="All requests, anonymous ones included")
    unique_keys_count: int = Field(description="Distinct API keys that requested it")
    status: RequestStatus = Field(
        description="open; investigating from 3 distinct keys; pending (accepted) from 10"
    )


class RequestedJurisdictionList(BaseModel):
    requests: list[RequestedJurisdiction]


class JurisdictionRequestResult(RequestedJurisdiction):
    estimated_timeline: str


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
