"""API shapes of GET /permits/search and of its 503 problems."""

from __future__ import annotations

from datetime import date
from typing import Literal

from pydantic import BaseModel, Field

from permitapi.web.openapi import Problem

Reliability = Literal["operational", "degraded", "down"]
WarningCode = Literal["source_unavailable", "source_incomplete", "source_lagging", "source_notice"]


class SearchResult(BaseModel):
    """A thin hit: enough to pick a permit; get the full record through the status endpoint."""

    permit_number: str
    jurisdiction: str = Field(description="Source slug: ladbs or epicla")
    address: str | None
    permit_type: str | None
    status: str | None = Field(description="Portal status text")
    valuation: float | None = Field(description="Declared valuation in dollars")
    issued_date: date | None = Field(description="Issuance date (YYYY-MM-DD)")
    applied_date: date | None = Field(description="Application or submission date")


class Pagination(BaseModel):
    has_more: bool
    next_cursor: str | None = Field(
        description="Opaque; valid 15 minutes, only with the same filters, scope and API key"
    )


class SearchWarning(BaseModel):
    source: str
    code: WarningCode
    message: str


class SourceFreshness(BaseModel):
    newest_issue_date: date | None = Field(
        description="Newest non-future issue date the source has published (null: unknown)"
    )
    requested_through: date | None = Field(
        description="The last date the search asked for: date_to, or today at the source"
    )
    lag_days: int | None = Field(
        description="Calendar days from newest_issue_date to today at the source"
    )
    reliability: Reliability = Field(
        description="operational; degraded (incomplete read or stale data); down (read failed)"
    )


class SearchResponse(BaseModel):
    results: list[SearchResult]
    result_count: int = Field(description="Number of results on this page")
    pagination: Pagination
    partial: bool = Field(description="True when a source read failed or was incomplete")
    warnings: list[SearchWarning]
    source_freshness: dict[str, SourceFreshness] = Field(description="Per selected source slug")


class UnverifiableProblem(Problem):
    """503 source_inconclusive / source_lagging: an empty result that cannot be trusted."""

    warnings: list[SearchWarning] = Field(default_factory=list)
    source_freshness: dict[str, SourceFreshness] = Field(default_factory=dict)
    retry_after_seconds: int | None = None
