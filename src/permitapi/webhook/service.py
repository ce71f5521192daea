"""Webhook rules: registration and its validation, plan caps, activity, secrets, deliveries.

Every call is scoped to the caller's key: another key's webhook is `None` here and 404 to the
client, exactly like one that does not exist. Registrations and deliveries cost no credits.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, Final

from sqlalchemy.ext.asyncio import AsyncSession

from permitapi.account.entitlements import PlanCap, ensure_below_cap, require_live_key
from permitapi.account.plans import SECRET_ROTATION_OVERLAP
from permitapi.account.service import Principal
from permitapi.errors import Conflict, NotFound, invalid_parameter
from permitapi.event.service import EVENT_TYPES
from permitapi.kit.clock import isoformat_z
from permitapi.kit.ids import new_uuid
from permitapi.sources.registry import Directory
from permitapi.webhook import fanout, repository, signing
from permitapi.webhook.destination import DestinationRefused, Resolver, resolve_destination
from permitapi.webhook.models import Webhook, WebhookDelivery

WHAT: Final = "Webhooks"


def webhook_not_found(webhook_id: str) -> NotFound:
    return NotFound(f"No webhook {webhook_id} under this API key.", code="webhook_not_found")


def public_view(webhook: Webhook) -> dict[str, Any]:
    return {
        "webhook_id": webhook.webhook_id,
        "url": webhook.url,
        "events": list(webhook.events),
        "jurisdiction_filter": (
            list(webhook.jurisdiction_filter) if webhook.jurisdiction_filter is not None else None
        ),
        "is_active": webhook.is_active,
        "disabled_reason": None if webhook.is_active else webhook.disabled_reason,
        "created_at": isoformat_z(webhook.created_at),
        "last_triggered_at": (
            isoformat_z(webhook.last_triggered_at) if webhook.last_triggered_at else None
        ),
        "consecutive_failures": webhook.consecutive_failures,
        "deleted_at": isoformat_z(webhook.deleted_at) if webhook.deleted_at else None,
    }


def delivery_view(delivery: WebhookDelivery) -> dict[str, Any]:
    def moment(value: datetime | None) -> str | None:
        return isoformat_z(value) if value is not None else None

    return {
        "id": delivery.delivery_id,
        "event_id": delivery.event_id,
        "event_type": delivery.event_type,
        "status": delivery.status,
        "attempts": delivery.attempts,
        "payload": delivery.payload,
        "last_error": delivery.last_error,
        "last_status_code": delivery.last_status_code,
        "replay_of": delivery.replay_of,
        "created_at": isoformat_z(delivery.created_at),
        "last_attempt_at": moment(delivery.last_attempt_at),
        "next_attempt_at": moment(delivery.next_attempt_at),
    }


# -- validation ------------------------------------------------------------------------------


def valid_events(events: list[str]) -> list[str]:
    unknown = [name for name in events if name not in EVENT_TYPES]
    if unknown:
        raise invalid_parameter(
            "events",
            f"unknown event name(s) {', '.join(map(repr, unknown))}; known: "
            + ", ".join(EVENT_TYPES),
            code="invalid_event",
            location="body",
        )
    return list(dict.fromkeys(events))


def valid_filter(directory: Directory, slugs: list[str] | None) -> list[str] | None:
    if slugs is None:
        return None
    unknown = [slug for slug in slugs if directory.get(slug) is None]
    if unknown:
        raise invalid_parameter(
            "jurisdiction_filter",
            f"unknown jurisdiction slug(s) {', '.join(map(repr, unknown))}; "
            "see GET /api/v1/jurisdictions",
            code="invalid_jurisdiction",
            location="body",
        )
    return list(dict.fromkeys(slugs))


async def valid_url(url: str, *, allow_loopback_http: bool, resolver: Resolver | None) -> str:
    try:
        destination = await resolve_destination(
            url, allow_loopback_http=allow_loopback_http, resolver=resolver
        )
    except DestinationRefused as refused:
        raise invalid_parameter(
            "url", refused.reason, code="invalid_webhook_url", location="body"
        ) from None
    return destination.url


WEBHOOK_CAP: Final = PlanCap(
    code="webhook_limit_reached",
    allows="active webhook(s) per key",
    upgrade_hint="Upgrade the plan for more active webhooks, or deactivate one.",
    enterprise_hint="Deactivate a webhook to register another.",
)


async def _ensure_room(session: AsyncSession, principal: Principal) -> None:
    await ensure_below_cap(
        session,
        principal,
        principal.plan.active_webhooks,
        WEBHOOK_CAP,
        lambda: repository.count_active(session, principal.api_key_id),
    )


# -- registrations ---------------------------------------------------------------------------


def checked_subscription(
    principal: Principal,
    directory: Directory,
    events: list[str] | None,
    jurisdiction_filter: list[str] | None,
) -> tuple[list[str] | None, list[str] | None]:
    """The key, event names and slugs of a registration or PATCH, checked before its URL is
    resolved (a DNS query is the slow part; a request that fails anyway does not make one)."""
    require_live_key(principal, WHAT)
    return (
        valid_events(events) if events is not None else None,
        valid_filter(directory, jurisdiction_filter),
    )


async def register(
    session: AsyncSession,
    principal: Principal,
    *,
    checked_url: str,
    events: list[str],
    jurisdiction_filter: list[str] | None,
    now: datetime,
) -> dict[str, Any]:
    """Arguments already checked: `checked_url` by `valid_url`, the rest by
    `checked_subscription` (both before the transaction opens)."""
    require_live_key(principal, WHAT)
    webhook = Webhook(
        webhook_id=new_uuid(),
        api_key_id=principal.api_key_id,
        url=checked_url,
        events=events,
        jurisdiction_filter=jurisdiction_filter,
        is_active=True,
        disabled_reason=None,
        secret=signing.new_secret(),
        previous_secret=None,
        previous_secret_valid_until=None,
        consecutive_failures=0,
        created_at=now,
        updated_at=now,
    )
    await _ensure_room(session, principal)
    await repository.insert_webhook(session, webhook)
    return {**public_view(webhook), "secret": webhook.secret, "warning": signing.STORE_WARNING}


async def list_webhooks(session: AsyncSession, principal: Principal) -> dict[str, Any]:
    require_live_key(principal, WHAT)
    found = await repository.webhooks_of(session, principal.api_key_id)
    return {"webhooks": [public_view(webhook) for webhook in found]}


async def owned(
    session: AsyncSession,
    principal: Principal,
    webhook_id: str,
    *,
    for_update: bool = False,
    deleted_ok: bool = False,
) -> Webhook:
    """The key's webhook (404 for another key's). A deleted one is only read (list, deliveries,
    a repeated DELETE): anything that would change or use it is 409 webhook_deleted."""
    require_live_key(principal, WHAT)
    webhook = await repository.owned_webhook(
        session, principal.api_key_id, webhook_id, for_update=for_update
    )
    if webhook is None:
        raise webhook_not_found(webhook_id)
    if webhook.deleted_at is not None and not deleted_ok:
        raise Conflict(
            f"Webhook {webhook_id} was deleted (deactivated for good); register a new one.",
            code="webhook_deleted",
            extra={"deleted_at": isoformat_z(webhook.deleted_at)},
        )
    return webhook


async def update(
    session: AsyncSession,
    principal: Principal,
    webhook_id: str,
    changes: dict[str, Any],
    *,
    checked_url: str | None,
    directory: Directory,
    now: datetime,
) -> dict[str, Any]:
    """Apply the fields present in `changes` (a PATCH body with unset fields left out)."""
    webhook = await owned(session, principal, webhook_id, for_update=True)
    values: dict[str, Any] = {}
    if checked_url is not None:
        values["url"] = checked_url
    if changes.get("events") is not None:
        values["events"] = valid_events(changes["events"])
    if "jurisdiction_filter" in changes:
        values["jurisdiction_filter"] = valid_filter(directory, changes["jurisdiction_filter"])
    activate = changes.get("is_active")
    if activate is True and not webhook.is_active:
        await _ensure_room(session, principal)
        values.update(is_active=True, disabled_reason=None, consecutive_failures=0)
    elif activate is False and webhook.is_active:
        values.update(is_active=False, disabled_reason="deactivated")
        await repository.kill_pending(session, webhook_id, "webhook deactivated")
    if values:
        values["updated_at"] = now
        await repository.update_webhook(session, webhook_id, values)
        for name, value in values.items():
            setattr(webhook, name, value)
    return public_view(webhook)


async def delete(
    session: AsyncSession, principal: Principal, webhook_id: str, now: datetime
) -> dict[str, Any]:
    """The contract's soft deactivation: the webhook stays listed with `is_active` false,
    `disabled_reason` deleted and `deleted_at`, its deliveries stay readable, it leaves the
    active cap and receives nothing more (pending deliveries become dead). A repeated DELETE
    answers the same and changes nothing."""
    webhook = await owned(session, principal, webhook_id, for_update=True, deleted_ok=True)
    if webhook.deleted_at is not None:
        return {"status": "deactivated", "webhook_id": webhook_id}
    await repository.update_webhook(
        session,
        webhook_id,
        {
            "is_active": False,
            "disabled_reason": "deleted",
            "deleted_at": now,
            "updated_at": now,
        },
    )
    await repository.kill_pending(session, webhook_id, "webhook deleted")
    return {"status": "deactivated", "webhook_id": webhook_id}


async def rotate_secret(
    session: AsyncSession, principal: Principal, webhook_id: str, now: datetime
) -> dict[str, Any]:
    """A new secret; the one it replaces keeps signing (a second v1 entry) for 24 hours. A
    rotation during an overlap ends the older overlap: only two secrets ever sign."""
    webhook = await owned(session, principal, webhook_id, for_update=True)
    secret = signing.new_secret()
    valid_until = now + SECRET_ROTATION_OVERLAP
    await repository.update_webhook(
        session,
        webhook_id,
        {
            "secret": secret,
            "previous_secret": webhook.secret,
            "previous_secret_valid_until": valid_until,
            "updated_at": now,
        },
    )
    return {
        "webhook_id": webhook_id,
        "secret": secret,
        "previous_secret_valid_until": isoformat_z(valid_until),
        "warning": signing.STORE_WARNING
        + " The previous secret keeps signing deliveries (a second v1 signature) until "
        + isoformat_z(valid_until)
        + ".",
    }


# -- deliveries ------------------------------------------------------------------------------


async def deliveries(
    session: AsyncSession, principal: Principal, webhook_id: str, limit: int
) -> dict[str, Any]:
    await owned(session, principal, webhook_id, deleted_ok=True)
    found = await repository.deliveries_of(session, webhook_id, limit)
    return {"webhook_id": webhook_id, "deliveries": [delivery_view(d) for d in found]}


async def replay(
    session: AsyncSession, principal: Principal, webhook_id: str, delivery_id: str, now: datetime
) -> dict[str, Any]:
    """A new pending delivery of the same event: new delivery_id, the original event_id and
    timestamp, the webhook's current URL and secret (read at attempt time). No event is added
    to the feed."""
    webhook = await owned(session, principal, webhook_id)
    original = await repository.delivery_of(session, webhook_id, delivery_id)
    if original is None:
        raise NotFound(
            f"No retained delivery {delivery_id} of webhook {webhook_id}.",
            code="delivery_not_found",
        )
    if original.status == "pending":
        raise Conflict(
            "The delivery is still pending: it will be attempted again; replay it once it "
            "is delivered or dead.",
            code="delivery_pending",
        )
    if not webhook.is_active:
        raise Conflict(
            "The webhook is inactive; re-activate it (PATCH is_active true) to replay.",
            code="webhook_inactive",
        )
    new_id = new_uuid()
    body = fanout.rebranded(original.payload, new_id)
    row = {
        "delivery_id": new_id,
        "webhook_id": webhook_id,
        "event_id": original.event_id,
        "event_type": original.event_type,
        "status": "pending",
        "attempts": 0,
        "payload": body,
        "event_timestamp": original.event_timestamp,
        "replay_of": original.delivery_id,
        "created_at": now,
        "next_attempt_at": now,
    }
    await repository.insert_deliveries(session, [row])
    created = await repository.delivery_of(session, webhook_id, new_id)
    assert created is not None
    return {
        "status": "pending",
        "webhook_id": webhook_id,
        "replay_of": original.delivery_id,
        "delivery": delivery_view(created),
    }
