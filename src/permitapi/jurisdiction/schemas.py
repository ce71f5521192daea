"""API shapes of the jurisdiction endpoints."""

from __future__ import annotations

from pydantic import BaseModel


class JurisdictionSummary(BaseModel):
    slug: str
    display_name: str
    platform: str
    state: str
    active_permits_count: int


class JurisdictionList(BaseModel):
    jurisdictions: list[JurisdictionSummary]
    total: int
