"""API shapes of the watch endpoints."""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from pydantic import BaseModel, Field


class WatchEnrolled(BaseModel):
    permit_number: str
    jurisdiction: str
    jurisdiction_display: str
    status: str = Field(description="The portal's status text, as the status record shows it")
    status_phase: str
    watching: bool
    created_at: datetime = Field(description="When the key started watching the permit")
    warning: str | None = Field(
        default=None, description="Present when the key has no active webhook"
    )


class WatchRemoved(BaseModel):
    status: Literal["unwatched"]
    permit_number: str


class WatchListItem(BaseModel):
    permit_number: str
    jurisdiction: str
    status: str
    created_at: datetime
    last_event_at: datetime | None = Field(description="Last event of this permit, if any")


class WatchList(BaseModel):
    watches: list[WatchListItem]
    total: int
    plan_limit: int
    remaining: int
