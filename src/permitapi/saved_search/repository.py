"""SQL for saved searches and the identities they have seen."""

from __future__ import annotations

from collections.abc import Collection, Iterable
from datetime import datetime
from typing import Any, cast

from sqlalchemy import Table, bindparam, delete, func, insert, select, update
from sqlalchemy.ext.asyncio import AsyncSession

from permitapi.account.models import Account, ApiKey
from permitapi.saved_search.models import SavedSearch, SavedSearchIdentity

Identity = tuple[str, str]  # (jurisdiction, permit_number)


async def insert_search(session: AsyncSession, search: SavedSearch) -> None:
    session.add(search)
    await session.flush()


async def count_active(session: AsyncSession, api_key_id: str) -> int:
    result = await session.execute(
        select(func.count())
        .select_from(SavedSearch)
        .where(SavedSearch.api_key_id == api_key_id, SavedSearch.status == "active")
    )
    return int(result.scalar_one())


async def searches_of(session: AsyncSession, api_key_id: str) -> list[SavedSearch]:
    result = await session.execute(
        select(SavedSearch)
        .where(SavedSearch.api_key_id == api_key_id)
        .order_by(SavedSearch.created_at, SavedSearch.saved_search_id)
    )
    return list(result.scalars())


async def owned_search(
    session: AsyncSession, api_key_id: str, saved_search_id: str, *, for_update: bool = False
) -> SavedSearch | None:
    statement = select(SavedSearch).where(
        SavedSearch.saved_search_id == saved_search_id, SavedSearch.api_key_id == api_key_id
    )
    if for_update:
        statement = statement.with_for_update()
    return (await session.execute(statement)).scalar_one_or_none()


async def locked_search(session: AsyncSession, saved_search_id: str) -> SavedSearch | None:
    """The search with its row locked (PostgreSQL) until the transaction ends, so a PATCH or
    DELETE cannot change it while an evaluation writes its outcome."""
    result = await session.execute(
        select(SavedSearch)
        .where(SavedSearch.saved_search_id == saved_search_id)
        .with_for_update()
        .execution_options(populate_existing=True)
    )
    return result.scalar_one_or_none()


async def update_search(
    session: AsyncSession, saved_search_id: str, values: dict[str, Any]
) -> None:
    await session.execute(
        update(SavedSearch).where(SavedSearch.saved_search_id == saved_search_id).values(values)
    )


async def delete_search(session: AsyncSession, saved_search_id: str) -> None:
    await forget_identities(session, saved_search_id)
    await session.execute(delete(SavedSearch).where(SavedSearch.saved_search_id == saved_search_id))


async def evaluable(session: AsyncSession, paid_plans: Collection[str]) -> list[SavedSearch]:
    """Active searches whose owner may use them now: an active live key of a paid plan with
    the discovery add-on. Oldest first."""
    result = await session.execute(
        select(SavedSearch)
        .join(ApiKey, ApiKey.id == SavedSearch.api_key_id)
        .join(Account, Account.id == ApiKey.account_id)
        .where(
            SavedSearch.status == "active",
            ApiKey.is_active.is_(True),
            ApiKey.is_sandbox.is_(False),
            Account.plan.in_(sorted(paid_plans)),
            Account.discovery_addon.is_(True),
        )
        .order_by(SavedSearch.created_at, SavedSearch.saved_search_id)
    )
    return list(result.scalars())


# -- identities ------------------------------------------------------------------------------


async def identity_counts(
    session: AsyncSession, saved_search_ids: Collection[str]
) -> dict[str, int]:
    if not saved_search_ids:
        return {}
    result = await session.execute(
        select(SavedSearchIdentity.saved_search_id, func.count())
        .where(SavedSearchIdentity.saved_search_id.in_(sorted(saved_search_ids)))
        .group_by(SavedSearchIdentity.saved_search_id)
    )
    return {row[0]: int(row[1]) for row in result.all()}


async def identities_of(session: AsyncSession, saved_search_id: str) -> set[Identity]:
    result = await session.execute(
        select(SavedSearchIdentity.jurisdiction, SavedSearchIdentity.permit_number).where(
            SavedSearchIdentity.saved_search_id == saved_search_id
        )
    )
    return {(row[0], row[1]) for row in result.all()}


async def insert_identities(
    session: AsyncSession, saved_search_id: str, identities: Iterable[Identity], now: datetime
) -> None:
    rows = [
        {
            "saved_search_id": saved_search_id,
            "jurisdiction": jurisdiction,
            "permit_number": permit_number,
            "first_seen_at": now,
            "last_seen_at": now,
        }
        for jurisdiction, permit_number in identities
    ]
    if rows:
        await session.execute(insert(SavedSearchIdentity), rows)


async def touch_identities(
    session: AsyncSession, saved_search_id: str, identities: Iterable[Identity], now: datetime
) -> None:
    """Mark identities read again (one executemany)."""
    rows = [
        {"b_jurisdiction": jurisdiction, "b_permit_number": number}
        for jurisdiction, number in identities
    ]
    if not rows:
        return
    table = cast(Table, SavedSearchIdentity.__table__)  # Core: an executemany
    await session.execute(
        update(table)
        .where(
            table.c.saved_search_id == saved_search_id,
            table.c.jurisdiction == bindparam("b_jurisdiction"),
            table.c.permit_number == bindparam("b_permit_number"),
        )
        .values(last_seen_at=now),
        rows,
    )


async def forget_unseen(session: AsyncSession, saved_search_id: str, before: datetime) -> None:
    await session.execute(
        delete(SavedSearchIdentity).where(
            SavedSearchIdentity.saved_search_id == saved_search_id,
            SavedSearchIdentity.last_seen_at < before,
        )
    )


async def forget_identities(session: AsyncSession, saved_search_id: str) -> None:
    await session.execute(
        delete(SavedSearchIdentity).where(SavedSearchIdentity.saved_search_id == saved_search_id)
    )
