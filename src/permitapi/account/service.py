"""Account rules: creating accounts with their two keys, resolving a key to a principal."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from sqlalchemy.ext.asyncio import AsyncSession

from permitapi.account import repository
from permitapi.account.key_caches import invalidate_account_everywhere, invalidate_everywhere
from permitapi.account.plans import (
    Meter,
    Plan,
    PlanName,
    monthly_limit,
    overage_allowed,
    plan_named,
)
from permitapi.errors import NotFound
from permitapi.kit.ids import new_token, new_uuid, sha256_hex

LIVE_PREFIX = "sk_live_"
SANDBOX_PREFIX = "sk_test_"
DISPLAY_PREFIX_LENGTH = 12


@dataclass(frozen=True, slots=True)
class CreatedAccount:
    account_id: str
    plan: str
    live_key: str
    sandbox_key: str


@dataclass(frozen=True, slots=True)
class Principal:
    """The caller behind a valid API key."""

    api_key_id: str
    account_id: str
    key_hash: str
    is_sandbox: bool
    plan: Plan
    discovery_addon: bool
    overage_enabled: bool
    custom_lookup_limit: int | None

    def limit(self, meter: Meter) -> int:
        return monthly_limit(
            self.plan,
            meter,
            discovery_addon=self.discovery_addon,
            custom_lookup_limit=self.custom_lookup_limit,
        )

    def may_exceed(self, meter: Meter) -> bool:
        return overage_allowed(
            self.plan,
            meter,
            overage_enabled=self.overage_enabled,
            discovery_addon=self.discovery_addon,
        )


def hash_key(raw_key: str) -> str:
    # Keys carry 192 random bits, so an unsalted digest is enough to make a leaked table useless.
    return sha256_hex(raw_key)


def looks_like_key(raw_key: str) -> bool:
    return raw_key.startswith((LIVE_PREFIX, SANDBOX_PREFIX)) and 16 <= len(raw_key) <= 128


async def create_account(
    session: AsyncSession,
    *,
    plan: PlanName,
    discovery_addon: bool,
    overage_enabled: bool,
    now: datetime,
    live_key: str | None = None,
    sandbox_key: str | None = None,
) -> CreatedAccount:
    """Create an account with a live and a sandbox key; the raw keys are returned only here."""
    account_id = new_uuid()
    await repository.insert_account(
        session,
        account_id=account_id,
        plan=plan.value,
        discovery_addon=discovery_addon,
        overage_enabled=overage_enabled,
        created_at=now,
    )
    live = live_key or new_token(LIVE_PREFIX)
    sandbox = sandbox_key or new_token(SANDBOX_PREFIX)
    for raw, is_sandbox in ((live, False), (sandbox, True)):
        await repository.insert_key(
            session,
            key_id=new_uuid(),
            account_id=account_id,
            key_hash=hash_key(raw),
            display_prefix=raw[:DISPLAY_PREFIX_LENGTH],
            is_sandbox=is_sandbox,
            created_at=now,
        )
    return CreatedAccount(account_id, plan.value, live, sandbox)


async def resolve_key(session: AsyncSession, raw_key: str) -> Principal | None:
    """The principal of an active key, or None for unknown and deactivated keys."""
    if not looks_like_key(raw_key):
        return None
    key_hash = hash_key(raw_key)
    record = await repository.find_key(session, key_hash)
    if record is None or not record.is_active:
        return None
    return Principal(
        api_key_id=record.api_key_id,
        account_id=record.account_id,
        key_hash=key_hash,
        is_sandbox=record.is_sandbox,
        plan=plan_named(record.plan),
        discovery_addon=record.discovery_addon,
        overage_enabled=record.overage_enabled,
        custom_lookup_limit=record.custom_lookup_limit,
    )


async def deactivate_key(session: AsyncSession, raw_key: str, now: datetime) -> None:
    if not await repository.deactivate_key(session, hash_key(raw_key), now):
        raise NotFound("No active key matches.", code="api_key_not_found")
    # Other processes hear of it through Redis when the caller announces it after commit
    # (cli.py), or their caches expire on their own.
    invalidate_everywhere(hash_key(raw_key))


async def set_plan(session: AsyncSession, account_id: str, plan: PlanName) -> None:
    if not await repository.set_plan(session, account_id, plan.value):
        raise NotFound(f"No account {account_id}.", code="account_not_found")
    invalidate_account_everywhere(account_id)
