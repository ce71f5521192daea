"""API shapes of the events feed."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from pydantic import BaseModel, Field


class FeedEvent(BaseModel):
    event_id: str = Field(description="Identifies the source event (the payloads' event_id)")
    event: str = Field(description="Event name; new names may be added")
    permit_number: str | None
    jurisdiction: str | None
    jurisdiction_display: str | None
    data: dict[str, Any] = Field(description="As in the webhook payload of this event")
    occurred_at: datetime = Field(description="When the service observed the source event")
    created_at: datetime = Field(description="When the event was durably appended")


class EventFeed(BaseModel):
    events: list[FeedEvent]
    next_cursor: str | None = Field(
        description="The checkpoint to send as `cursor` next time: after the last event of "
        "this page; the cursor sent, unchanged, when the page is empty; null when there has "
        "never been an event and no cursor was sent"
    )
    has_more: bool = Field(description="true: another page is ready now; poll again at once")
