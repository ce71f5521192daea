"""SQL for webhook registrations and their deliveries."""

from __future__ import annotations

from collections.abc import Collection
from typing import Any

from sqlalchemy import insert, select
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
