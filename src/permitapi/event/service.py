"""The one seam through which the service announces domain events.

`emit` writes, in the caller's transaction, the `domain_events` outbox row, one events-feed
entry per recipient key, and one pending webhook delivery per matching active webhook of those
keys: the event, its feed entries and its deliveries exist exactly when the change that caused
them commits. Monitors decide *who* is told (the recipients); nothing here sends anything.

The deliveries are written by a subscriber (`webhook.fanout.enqueue_deliveries`) that the
composition module registers with `subscribe`: the delivery side imports this module, so this
one cannot import it back.
"""

from __future__ import annotations

from collections.abc import Collection
from datetime import datetime
from typing import Any, Final, Protocol

from sqlalchemy.ext.asyncio import AsyncSession

from permitapi.event import repository
from permitapi.kit.ids import new_uuid

STATUS_CHANGE: Final = "status_change"
INSPECTION_COMPLETE: Final = "inspection_complete"
PERMIT_APPROVED: Final = "permit_approved"
PERMIT_DENIED: Final = "permit_denied"
CORRECTIONS_REQUIRED: Final = "corrections_required"
OPERATION_COMPLETED: Final = "operation_completed"
CRITERIA_MATCH: Final = "criteria_match"
PERMIT_CREATED: Final = "permit_created"
EVENT_TYPES: Final = (
    STATUS_CHANGE,
    INSPECTION_COMPLETE,
    PERMIT_APPROVED,
    PERMIT_DENIED,
    CORRECTIONS_REQUIRED,
    OPERATION_COMPLETED,
    CRITERIA_MATCH,
    PERMIT_CREATED,
)
PERMIT_EVENT_TYPES: Final = (
    STATUS_CHANGE,
    INSPECTION_COMPLETE,
    PERMIT_APPROVED,
    PERMIT_DENIED,
    CORRECTIONS_REQUIRED,
)


class Subscriber(Protocol):
    """Told of every event `emit` records, in the same transaction, after its feed entries."""

    async def __call__(
        self,
        session: AsyncSession,
        *,
        event_id: str,
        event_type: str,
        permit_number: str | None,
        jurisdiction: str | None,
        data: dict[str, Any],
        timestamp: datetime,
        recipients: Collection[str],
        now: datetime,
    ) -> object: ...


_subscribers: list[Subscriber] = []


def subscribe(subscriber: Subscriber) -> None:
    """Tell `subscriber` of every event from now on (once, however often it is subscribed)."""
    if subscriber not in _subscribers:
        _subscribers.append(subscriber)


async def emit(
    session: AsyncSession,
    event_type: str,
    *,
    data: dict[str, Any],
    occurred_at: datetime,
    recipients: Collection[str],
    api_key_id: str | None = None,
    permit_number: str | None = None,
    jurisdiction: str | None = None,
    created_at: datetime | None = None,
) -> str:
    """Append one event in the current transaction and fan it out; returns its event_id.

    `recipients` are the API key ids whose feed gets the event and whose active webhooks
    (subscribed to `event_type`, jurisdiction_filter matching) get a pending delivery. An event
    with no recipients is still recorded (the outbox is the service's history).
    """
    if event_type not in EVENT_TYPES:
        raise ValueError(f"unknown event type {event_type!r}")
    event_id = new_uuid()
    appended_at = created_at or occurred_at
    seq = await repository.insert_event(
        session,
        event_id=event_id,
        event_type=event_type,
        api_key_id=api_key_id,
        permit_number=permit_number,
        jurisdiction=jurisdiction,
        data=data,
        occurred_at=occurred_at,
        created_at=appended_at,
    )
    await repository.insert_feed_entries(session, seq, recipients, appended_at)
    for subscriber in _subscribers:
        await subscriber(
            session,
            event_id=event_id,
            event_type=event_type,
            permit_number=permit_number,
            jurisdiction=jurisdiction,
            data=data,
            timestamp=occurred_at,
            recipients=recipients,
            now=appended_at,
        )
    return event_id
