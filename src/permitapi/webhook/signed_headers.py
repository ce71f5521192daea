"""The signed headers of one attempt to a webhook, shared by deliveries and the test probe."""

from __future__ import annotations

from datetime import datetime

from permitapi.webhook import signing
from permitapi.webhook.models import Webhook


def secrets_in_force(webhook: Webhook, now: datetime) -> list[str]:
    """The current secret, then the previous one while its rotation overlap lasts."""
    found = [webhook.secret]
    until = webhook.previous_secret_valid_until
    if webhook.previous_secret and until is not None and until > now:
        found.append(webhook.previous_secret)
    return found


def signed_request(
    webhook: Webhook, delivery_id: str, event_type: str, body: bytes, now: datetime
) -> dict[str, str]:
    return signing.delivery_headers(
        secrets_in_force=secrets_in_force(webhook, now),
        delivery_id=delivery_id,
        event_type=event_type,
        timestamp=int(now.timestamp()),
        body=body,
    )
