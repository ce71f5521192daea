"""SQL for watches and the per-permit state of the daily watch check."""

from __future__ import annotations

from collections.abc import Collection, Sequence
from datetime import datetime
from typing import Any, cast

from sqlalchemy import Table, bindparam, delete, func, select, tuple_, update
from sqlalchemy.ext.asyncio import AsyncSession

from permitapi.db.upsert import insert_or_ignore
from permitapi.watch.models import Watch, WatchedPermit

ACTIVE = "active"


async def active_watch(
    session: AsyncSession, api_key_id: str, jurisdiction: str, permit_number: str
) -> Watch | None:
    result = await session.execute(
        select(Watch).where(
            Watch.api_key_id == api_key_id,
            Watch.jurisdiction == jurisdiction,
            Watch.permit_number == permit_number,
            Watch.status == ACTIVE,
        )
    )
    return result.scalar_one_or_none()


async def count_active(session: AsyncSession, api_key_id: str) -> int:
    result = await session.execute(
        select(func.count())
        .select_from(Watch)
        .where(Watch.api_key_id == api_key_id, Watch.status == ACTIVE)
    )
    return int(result.scalar_one())


async def insert_watch(session: AsyncSession, watch: Watch) -> None:
    session.add(watch)
    await session.flush()


async def ensure_watched_permit(
    session: AsyncSession, jurisdiction: str, permit_number: str, next_check_at: datetime
) -> None:
    await session.execute(
        insert_or_ignore(
            session,
            WatchedPermit,
            {
                "jurisdiction": jurisdiction,
                "permit_number": permit_number,
                "next_check_at": next_check_at,
            },
        )
    )


async def end_watch(session: AsyncSession, watch_id: str, status: str, now: datetime) -> None:
    await session.execute(
        update(Watch).where(Watch.watch_id == watch_id).values(status=status, ended_at=now)
    )


async def active_watches_of(session: AsyncSession, api_key_id: str) -> list[Watch]:
    result = await session.execute(
        select(Watch)
        .where(Watch.api_key_id == api_key_id, Watch.status == ACTIVE)
        .order_by(Watch.created_at, Watch.watch_id)
    )
    return list(result.scalars())


async def watchers_of(
    session: AsyncSession, identities: Collection[tuple[str, str]]
) -> list[Watch]:
    """Active watches of these permits (jurisdiction, permit_number)."""
    if not identities:
        return []
    result = await session.execute(
        select(Watch).where(
            tuple_(Watch.jurisdiction, Watch.permit_number).in_(sorted(set(identities))),
            Watch.status == ACTIVE,
        )
    )
    return list(result.scalars())


async def touch_watches(session: AsyncSession, watch_ids: Collection[str], at: datetime) -> None:
    if watch_ids:
        await session.execute(
            update(Watch).where(Watch.watch_id.in_(sorted(watch_ids))).values(last_event_at=at)
        )


async def complete_watches(session: AsyncSession, watch_ids: Collection[str], at: datetime) -> None:
    if watch_ids:
        await session.execute(
            update(Watch)
            .where(Watch.watch_id.in_(sorted(watch_ids)), Watch.status == ACTIVE)
            .values(status="completed", ended_at=at)
        )


# -- the daily check -----------------------------------------------------------------------------


async def due_permits(
    session: AsyncSession, now: datetime, *, jurisdictions: Collection[str] | None, limit: int
) -> list[WatchedPermit]:
    """Watched permits due for their check that still have an active watch."""
    has_watch = (
        select(Watch.watch_id)
        .where(
            Watch.jurisdiction == WatchedPermit.jurisdiction,
            Watch.permit_number == WatchedPermit.permit_number,
            Watch.status == ACTIVE,
        )
        .exists()
    )
    query = select(WatchedPermit).where(WatchedPermit.next_check_at <= now, has_watch)
    if jurisdictions is not None:
        query = query.where(WatchedPermit.jurisdiction.in_(sorted(jurisdictions)))
    result = await session.execute(
        query.order_by(WatchedPermit.next_check_at, WatchedPermit.permit_number).limit(limit)
    )
    return list(result.scalars())


async def record_checks(session: AsyncSession, rows: Sequence[dict[str, Any]]) -> None:
    """Each row: jurisdiction, permit_number and the columns to set. Rows setting the same
    columns go in one executemany (ORM bulk UPDATE by primary key): a pass over 1,000 watched
    permits was 1,000 statements."""
    groups: dict[frozenset[str], list[dict[str, Any]]] = {}
    for row in rows:
        # Bind names of their own: the key columns' names are taken by the WHERE clause.
        groups.setdefault(frozenset(row), []).append({f"b_{k}": v for k, v in row.items()})
    table = cast(Table, WatchedPermit.__table__)
    for columns, group in groups.items():
        statement = (
            update(table)
            .where(
                table.c.jurisdiction == bindparam("b_jurisdiction"),
                table.c.permit_number == bindparam("b_permit_number"),
            )
            .values(
                {
                    name: bindparam(f"b_{name}")
                    for name in columns
                    if name not in ("jurisdiction", "permit_number")
                }
            )
        )
        # A Core executemany: a permit unwatched (and its row deleted) meanwhile is skipped,
        # where the ORM's bulk UPDATE would raise StaleDataError.
        await session.execute(statement, group)


async def unwatched_permits(session: AsyncSession) -> int:
    """Delete check state of permits nobody watches any more; returns how many."""
    has_watch = (
        select(Watch.watch_id)
        .where(
            Watch.jurisdiction == WatchedPermit.jurisdiction,
            Watch.permit_number == WatchedPermit.permit_number,
            Watch.status == ACTIVE,
        )
        .exists()
    )
    result = await session.execute(delete(WatchedPermit).where(~has_watch))
    return int(result.rowcount or 0)  # type: ignore[attr-defined]
