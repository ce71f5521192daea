"""From one event to its pending deliveries: one row per matching active webhook, written in
the transaction that records the event (the outbox), each with the exact bytes it will send."""

from __future__ import annotations

from collections.abc import Collection
from datetime import datetime
from typing import Any

import orjson
from sqlalchemy.ext.asyncio import AsyncSession

from permitapi.kit.clock import isoformat_z
from permitapi.kit.ids import new_uuid
from permitapi.sources.registry import default_directory
from permitapi.webhook import repository
from permitapi.webhook.models import Webhook


def matches(webhook: Webhook, event_type: str, jurisdiction: str | None) -> bool:
    """A webhook gets an event it subscribes to, within its jurisdiction_filter (an event
    without a jurisdiction passes any filter)."""
    if event_type not in webhook.events:
        return False
    if webhook.jurisdiction_filter and jurisdiction is not None:
        return jurisdiction in webhook.jurisdiction_filter
    return True


def envelope_bytes(
    *,
    event_id: str,
    delivery_id: str,
    event_type: str,
    permit_number: str | None,
    jurisdiction: str | None,
    data: dict[str, Any],
    timestamp: datetime,
) -> bytes:
    """The payload envelope as sent, signed and stored."""
    display = None
    if jurisdiction is not None:
        found = default_directory().get(jurisdiction)
        display = found.display_name if found is not None else jurisdiction
    return orjson.dumps(
        {
            "event_id": event_id,
            "delivery_id": delivery_id,
            "event": event_type,
            "permit_number": permit_number,
            "jurisdiction": jurisdiction,
            "jurisdiction_display": display,
            "data": data,
            "timestamp": isoformat_z(timestamp),
        }
    )


async def enqueue_deliveries(
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
) -> list[str]:
    """Insert one pending delivery per matching active webhook of `recipients`; returns the
    delivery ids. The first attempt is due at once."""
    rows: list[dict[str, Any]] = []
    for webhook in await repository.active_webhooks_of(session, recipients):
        if not matches(webhook, event_type, jurisdiction):
            continue
        delivery_id = new_uuid()
        payload = envelope_bytes(
            event_id=event_id,
            delivery_id=delivery_id,
            event_type=event_type,
            permit_number=permit_number,
            jurisdiction=jurisdiction,
            data=data,
            timestamp=timestamp,
        )
        rows.append(
            {
                "delivery_id": delivery_id,
                "webhook_id": webhook.webhook_id,
                "event_id": event_id,
                "event_type": event_type,
                "status": "pending",
                "attempts": 0,
                "payload": payload.decode(),
                "event_timestamp": timestamp,
                "created_at": now,
                "next_attempt_at": now,
            }
        )
    await repository.insert_deliveries(session, rows)
    return [row["delivery_id"] for row in rows]


def rebranded(payload: str, delivery_id: str) -> str:
    """A stored payload with a new delivery_id (a manual replay): every other byte of the
    envelope, event_id and timestamp included, is the original's."""
    envelope = orjson.loads(payload)
    envelope["delivery_id"] = delivery_id
    return orjson.dumps(envelope).decode()
