"""SQL for webhook registrations and their deliveries."""

from __future__ import annotations

from collections.abc import Collection, Sequence
from datetime import datetime
from typing import Any, cast

from sqlalchemy import Table, bindparam, delete, func, insert, or_, select, update
from sqlalchemy.ext.asyncio import AsyncSession

from permitapi.webhook.models import Webhook, WebhookDelivery


async def active_webhooks_of(session: AsyncSession, api_key_ids: Collection[str]) -> list[Webhook]:
    if not api_key_ids:
        return []
    result = await session.execute(
        select(Webhook)
        .where(Webhook.api_key_id.in_(sorted(set(api_key_ids))), Webhook.is_active.is_(True))
        .order_by(Webhook.created_at, Webhook.webhook_id)
    )
    return list(result.scalars())


async def insert_deliveries(session: AsyncSession, rows: list[dict[str, Any]]) -> None:
    if rows:
        await session.execute(insert(WebhookDelivery), rows)


# -- registrations ---------------------------------------------------------------------------


async def insert_webhook(session: AsyncSession, webhook: Webhook) -> None:
    session.add(webhook)
    await session.flush()


async def count_active(session: AsyncSession, api_key_id: str) -> int:
    result = await session.execute(
        select(func.count())
        .select_from(Webhook)
        .where(Webhook.api_key_id == api_key_id, Webhook.is_active.is_(True))
    )
    return int(result.scalar_one())


async def webhooks_of(session: AsyncSession, api_key_id: str) -> list[Webhook]:
    """The key's webhooks, deleted (soft-deactivated) ones included, oldest first."""
    result = await session.execute(
        select(Webhook)
        .where(Webhook.api_key_id == api_key_id)
        .order_by(Webhook.created_at, Webhook.webhook_id)
    )
    return list(result.scalars())


async def owned_webhook(
    session: AsyncSession, api_key_id: str, webhook_id: str, *, for_update: bool = False
) -> Webhook | None:
    """A webhook of this key, deleted or not (another key's webhook is None: 404)."""
    query = select(Webhook).where(
        Webhook.webhook_id == webhook_id, Webhook.api_key_id == api_key_id
    )
    if for_update:
        query = query.with_for_update()
    result = await session.execute(query)
    return result.scalar_one_or_none()


async def webhook_by_id(session: AsyncSession, webhook_id: str) -> Webhook | None:
    return await session.get(Webhook, webhook_id)


async def kill_pending(session: AsyncSession, webhook_id: str, reason: str) -> int:
    """A webhook that stops receiving turns its pending deliveries dead (replayable once it is
    active again) rather than leaving them waiting for an attempt that will never be made."""
    result = await session.execute(
        update(WebhookDelivery)
        .where(WebhookDelivery.webhook_id == webhook_id, WebhookDelivery.status == "pending")
        .values(status="dead", next_attempt_at=None, last_error=reason)
    )
    return int(result.rowcount or 0)  # type: ignore[attr-defined]


# -- deliveries ------------------------------------------------------------------------------


async def deliveries_of(
    session: AsyncSession, webhook_id: str, limit: int
) -> list[WebhookDelivery]:
    result = await session.execute(
        select(WebhookDelivery)
        .where(WebhookDelivery.webhook_id == webhook_id)
        .order_by(WebhookDelivery.created_at.desc(), WebhookDelivery.delivery_id.desc())
        .limit(limit)
    )
    return list(result.scalars())


async def delivery_of(
    session: AsyncSession, webhook_id: str, delivery_id: str
) -> WebhookDelivery | None:
    result = await session.execute(
        select(WebhookDelivery).where(
            WebhookDelivery.webhook_id == webhook_id, WebhookDelivery.delivery_id == delivery_id
        )
    )
    return result.scalar_one_or_none()


async def claim_webhooks(
    session: AsyncSession, owner: str, now: datetime, until: datetime, limit: int
) -> list[str]:
    """Lease up to `limit` active webhooks that have a due delivery and no live lease. The
    conditional UPDATE is the claim: two workers never hold one webhook."""
    free = or_(Webhook.delivery_lease_until.is_(None), Webhook.delivery_lease_until < now)
    candidates = (
        select(WebhookDelivery.webhook_id)
        .join(Webhook, Webhook.webhook_id == WebhookDelivery.webhook_id)
        .where(
            WebhookDelivery.status == "pending",
            WebhookDelivery.next_attempt_at <= now,
            Webhook.is_active.is_(True),
            free,
        )
        .distinct()
        .limit(limit)
    )
    due = [row[0] for row in (await session.execute(candidates)).all()]
    if not due:
        return []
    result = await session.execute(
        update(Webhook)
        .where(Webhook.webhook_id.in_(due), Webhook.is_active.is_(True), free)
        .values(delivery_lease_owner=owner, delivery_lease_until=until)
        .returning(Webhook.webhook_id)
    )
    return [row[0] for row in result.all()]


async def release_webhook(session: AsyncSession, webhook_id: str, owner: str) -> None:
    await session.execute(
        update(Webhook)
        .where(Webhook.webhook_id == webhook_id, Webhook.delivery_lease_owner == owner)
        .values(delivery_lease_owner=None, delivery_lease_until=None)
    )


async def due_deliveries(
    session: AsyncSession, webhook_id: str, now: datetime, limit: int
) -> list[WebhookDelivery]:
    result = await session.execute(
        select(WebhookDelivery)
        .where(
            WebhookDelivery.webhook_id == webhook_id,
            WebhookDelivery.status == "pending",
            WebhookDelivery.next_attempt_at <= now,
        )
        .order_by(WebhookDelivery.next_attempt_at, WebhookDelivery.created_at)
        .limit(limit)
    )
    return list(result.scalars())


async def holds_lease(session: AsyncSession, webhook_id: str, owner: str) -> bool:
    """Whether `owner` still holds the webhook, locking its row (PostgreSQL) until the
    transaction ends so the lease cannot change hands while outcomes are written."""
    result = await session.execute(
        select(Webhook.delivery_lease_owner)
        .where(Webhook.webhook_id == webhook_id)
        .with_for_update()
    )
    return result.scalar_one_or_none() == owner


async def record_attempts(session: AsyncSession, updates: Sequence[dict[str, Any]]) -> None:
    """Write attempt outcomes in one executemany, each only while its delivery is pending.
    Every dict carries the same keys (delivery_id plus the columns to set)."""
    if not updates:
        return
    columns = [name for name in updates[0] if name != "delivery_id"]
    table = cast(Table, WebhookDelivery.__table__)  # Core: an executemany, not an ORM bulk update
    statement = (
        update(table)
        .where(table.c.delivery_id == bindparam("b_delivery_id"), table.c.status == "pending")
        .values({name: bindparam(f"b_{name}", type_=table.c[name].type) for name in columns})
    )
    await session.execute(
        statement, [{f"b_{name}": value for name, value in row.items()} for row in updates]
    )


async def update_webhook(session: AsyncSession, webhook_id: str, values: dict[str, Any]) -> None:
    await session.execute(update(Webhook).where(Webhook.webhook_id == webhook_id).values(values))


# -- retention -------------------------------------------------------------------------------


async def purge_deliveries_before(session: AsyncSession, cutoff: datetime) -> int:
    """Delivery history older than the retention window; a still-pending one is kept (it
    cannot be: attempts end within about two days)."""
    result = await session.execute(
        delete(WebhookDelivery).where(
            WebhookDelivery.created_at < cutoff, WebhookDelivery.status != "pending"
        )
    )
    return int(result.rowcount or 0)  # type: ignore[attr-defined]
