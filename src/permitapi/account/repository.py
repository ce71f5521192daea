"""SQL for accounts and API keys."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import Select, func, select, update
from sqlalchemy.ext.asyncio import AsyncSession

from permitapi.account.models import Account, ApiKey


@dataclass(frozen=True, slots=True)
class KeyRecord:
    api_key_id: str
    account_id: str
    is_sandbox: bool
    is_active: bool
    plan: str
    discovery_addon: bool
    overage_enabled: bool
    custom_lookup_limit: int | None


async def insert_account(
    session: AsyncSession,
    *,
    account_id: str,
    plan: str,
    discovery_addon: bool,
    overage_enabled: bool,
    created_at: datetime,
) -> None:
    session.add(
        Account(
            id=account_id,
            plan=plan,
            discovery_addon=discovery_addon,
            overage_enabled=overage_enabled,
            custom_lookup_limit=None,
            created_at=created_at,
        )
    )
    await session.flush()


async def insert_key(
    session: AsyncSession,
    *,
    key_id: str,
    account_id: str,
    key_hash: str,
    display_prefix: str,
    is_sandbox: bool,
    created_at: datetime,
) -> None:
    session.add(
        ApiKey(
            id=key_id,
            account_id=account_id,
            key_hash=key_hash,
            display_prefix=display_prefix,
            is_sandbox=is_sandbox,
            is_active=True,
            created_at=created_at,
        )
    )
    await session.flush()


async def find_key(session: AsyncSession, key_hash: str) -> KeyRecord | None:
    row = (
        await session.execute(
            select(
                ApiKey.id,
                ApiKey.account_id,
                ApiKey.is_sandbox,
                ApiKey.is_active,
                Account.plan,
                Account.discovery_addon,
                Account.overage_enabled,
                Account.custom_lookup_limit,
            )
            .join(Account, Account.id == ApiKey.account_id)
            .where(ApiKey.key_hash == key_hash)
        )
    ).one_or_none()
    return None if row is None else KeyRecord(*row)


async def deactivate_key(session: AsyncSession, key_hash: str, at: datetime) -> bool:
    result = await session.execute(
        update(ApiKey)
        .where(ApiKey.key_hash == key_hash, ApiKey.is_active.is_(True))
        .values(is_active=False, deactivated_at=at)
    )
    return bool(result.rowcount)  # type: ignore[attr-defined]


async def set_plan(session: AsyncSession, account_id: str, plan: str) -> bool:
    result = await session.execute(
        update(Account).where(Account.id == account_id).values(plan=plan)
    )
    return bool(result.rowcount)  # type: ignore[attr-defined]


async def set_flags(
    session: AsyncSession,
    account_id: str,
    *,
    discovery_addon: bool | None = None,
    overage_enabled: bool | None = None,
) -> bool:
    values: dict[str, bool] = {}
    if discovery_addon is not None:
        values["discovery_addon"] = discovery_addon
    if overage_enabled is not None:
        values["overage_enabled"] = overage_enabled
    if not values:
        return True
    result = await session.execute(update(Account).where(Account.id == account_id).values(values))
    return bool(result.rowcount)  # type: ignore[attr-defined]


async def plan_of_key(session: AsyncSession, api_key_id: str) -> str | None:
    """The plan of the account owning a key (workers finishing a key's operation need it)."""
    result = await session.execute(
        select(Account.plan)
        .join(ApiKey, ApiKey.account_id == Account.id)
        .where(ApiKey.id == api_key_id)
    )
    return result.scalar_one_or_none()


async def lock_key(session: AsyncSession, api_key_id: str) -> None:
    """Serialise a key's capped creations (webhooks, watches) until the transaction ends: on
    PostgreSQL a row lock; SQLite already has a single writer."""
    await session.execute(select(ApiKey.id).where(ApiKey.id == api_key_id).with_for_update())


@dataclass(frozen=True, slots=True)
class KeyListing:
    """A key as `permitapi keys list` shows it: its id and display prefix, never the key."""

    api_key_id: str
    account_id: str
    display_prefix: str
    is_sandbox: bool
    is_active: bool
    plan: str
    created_at: datetime
    deactivated_at: datetime | None


@dataclass(frozen=True, slots=True)
class AccountListing:
    account_id: str
    plan: str
    discovery_addon: bool
    overage_enabled: bool
    active_keys: int
    created_at: datetime


async def list_keys(session: AsyncSession, account_id: str | None = None) -> list[KeyListing]:
    statement = (
        select(
            ApiKey.id,
            ApiKey.account_id,
            ApiKey.display_prefix,
            ApiKey.is_sandbox,
            ApiKey.is_active,
            Account.plan,
            ApiKey.created_at,
            ApiKey.deactivated_at,
        )
        .join(Account, Account.id == ApiKey.account_id)
        .order_by(ApiKey.created_at, ApiKey.id)
    )
    if account_id is not None:
        statement = statement.where(ApiKey.account_id == account_id)
    return [KeyListing(*row) for row in (await session.execute(statement)).all()]


async def list_accounts(session: AsyncSession) -> list[AccountListing]:
    active_keys = (
        select(func.count(ApiKey.id))
        .where(ApiKey.account_id == Account.id, ApiKey.is_active.is_(True))
        .scalar_subquery()
    )
    statement = select(
        Account.id,
        Account.plan,
        Account.discovery_addon,
        Account.overage_enabled,
        active_keys,
        Account.created_at,
    ).order_by(Account.created_at, Account.id)
    return [AccountListing(*row) for row in (await session.execute(statement)).all()]


def key_active_query(api_key_id: Any) -> Select[bool]:
    """The key's `is_active` (no row: deleted). `api_key_id` may be a bind parameter: the fast
    path compiles this same query for its raw drivers (permit/lookup/fast/repository.py)."""
    return select(ApiKey.is_active).where(ApiKey.id == api_key_id)


async def key_is_active(session: AsyncSession, api_key_id: str) -> bool:
    result = await session.execute(key_active_query(api_key_id))
    return bool(result.scalar_one_or_none())
