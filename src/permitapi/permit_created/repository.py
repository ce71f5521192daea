"""SQL of the permit_created monitor: observed identities and the webhooks it announces to."""

from __future__ import annotations

from collections.abc import Collection, Sequence
from datetime import datetime
from typing import Final, cast

from sqlalchemy import Table, bindparam, delete, insert, select, update
from sqlalchemy.ext.asyncio import AsyncSession

from permitapi.account.models import Account, ApiKey
from permitapi.permit_created.models import ObservedPermit
from permitapi.webhook.models import Webhook

Identity = tuple[str, str]  # (jurisdiction, permit_number)
IN_CHUNK: Final = 500  # bound parameters per IN list


async def observed_among(session: AsyncSession, identities: Collection[Identity]) -> set[Identity]:
    """Which of `identities` were observed before."""
    by_source: dict[str, list[str]] = {}
    for jurisdiction, number in identities:
        by_source.setdefault(jurisdiction, []).append(number)
    found: set[Identity] = set()
    for jurisdiction, numbers in by_source.items():
        for start in range(0, len(numbers), IN_CHUNK):
            result = await session.execute(
                select(ObservedPermit.permit_number).where(
                    ObservedPermit.jurisdiction == jurisdiction,
                    ObservedPermit.permit_number.in_(numbers[start : start + IN_CHUNK]),
                )
            )
            found.update((jurisdiction, number) for number in result.scalars())
    return found


async def insert_observed(
    session: AsyncSession, identities: Sequence[Identity], now: datetime
) -> None:
    rows = [
        {
            "jurisdiction": jurisdiction,
            "permit_number": number,
            "first_observed_at": now,
            "last_observed_at": now,
        }
        for jurisdiction, number in identities
    ]
    if rows:
        await session.execute(insert(ObservedPermit), rows)


async def touch_observed(
    session: AsyncSession, identities: Sequence[Identity], now: datetime
) -> None:
    if not identities:
        return
    table = cast(Table, ObservedPermit.__table__)  # Core: an executemany
    await session.execute(
        update(table)
        .where(
            table.c.jurisdiction == bindparam("b_jurisdiction"),
            table.c.permit_number == bindparam("b_permit_number"),
        )
        .values(last_observed_at=now),
        [{"b_jurisdiction": j, "b_permit_number": n} for j, n in identities],
    )


async def forget_before(session: AsyncSession, cutoff: datetime) -> None:
    await session.execute(delete(ObservedPermit).where(ObservedPermit.last_observed_at < cutoff))


async def subscribed_webhooks(
    session: AsyncSession, event_type: str, plans: Collection[str]
) -> list[Webhook]:
    """Active webhooks explicitly subscribed to `event_type` whose key may receive it: an
    active live key of one of `plans` with the discovery add-on."""
    result = await session.execute(
        select(Webhook)
        .join(ApiKey, ApiKey.id == Webhook.api_key_id)
        .join(Account, Account.id == ApiKey.account_id)
        .where(
            Webhook.is_active.is_(True),
            ApiKey.is_active.is_(True),
            ApiKey.is_sandbox.is_(False),
            Account.plan.in_(sorted(plans)),
            Account.discovery_addon.is_(True),
        )
        .order_by(Webhook.created_at, Webhook.webhook_id)
    )
    # The subscription is a JSON list: filtered here rather than with per-engine JSON SQL.
    return [webhook for webhook in result.scalars() if event_type in webhook.events]
