"""The one seam through which the service announces domain events.

`emit` writes a `domain_events` outbox row in the caller's transaction: the event exists
exactly when the change that caused it commits. The monitoring work (webhooks, the events
feed) reads the outbox; nothing here delivers anything.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, Final

from sqlalchemy.ext.asyncio import AsyncSession

from permitapi.event import repository
from permitapi.kit.ids import new_uuid

OPERATION_COMPLETED: Final = "operation_completed"
EVENT_TYPES: Final = (
    "status_change",
    "inspection_complete",
    "permit_approved",
    "permit_denied",
    "corrections_required",
    OPERATION_COMPLETED,
    "criteria_match",
    "permit_created",
)


async def emit(
    session: AsyncSession,
    event_type: str,
    *,
    data: dict[str, Any],
    occurred_at: datetime,
    api_key_id: str | None = None,
    permit_number: str | None = None,
    jurisdiction: str | None = None,
) -> str:
    """Append one event to the outbox in the current transaction; returns its event_id."""
    if event_type not in EVENT_TYPES:
        raise ValueError(f"unknown event type {event_type!r}")
    event_id = new_uuid()
    await repository.insert_event(
        session,
        event_id=event_id,
        event_type=event_type,
        api_key_id=api_key_id,
        permit_number=permit_number,
        jurisdiction=jurisdiction,
        data=data,
        occurred_at=occurred_at,
        created_at=occurred_at,
    )
    return event_id
