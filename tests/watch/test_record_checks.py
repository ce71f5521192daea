"""watch.repository.record_checks: one executemany per set of columns, on both engines; a
permit whose row went away meanwhile (unwatched during a pass) is skipped, not an error."""

from __future__ import annotations

from datetime import timedelta

from sqlalchemy import delete, select

from permitapi.context import AppContext
from permitapi.watch import repository
from permitapi.watch.models import WatchedPermit


async def test_rows_are_updated_by_key_and_a_vanished_row_is_skipped(ctx: AppContext) -> None:
    now = ctx.clock.now()
    async with ctx.transaction() as session:
        await session.execute(delete(WatchedPermit).where(WatchedPermit.jurisdiction == "rc"))
        for number in ("A", "B", "C"):
            session.add(WatchedPermit(jurisdiction="rc", permit_number=number, next_check_at=now))
    later = now + timedelta(days=1)
    async with ctx.transaction() as session:
        await repository.record_checks(
            session,
            [
                {"jurisdiction": "rc", "permit_number": "A", "next_check_at": later},
                {"jurisdiction": "rc", "permit_number": "B", "next_check_at": later},
                {"jurisdiction": "rc", "permit_number": "C", "last_check_error": "feed: down"},
                {"jurisdiction": "rc", "permit_number": "GONE", "next_check_at": later},
            ],
        )
    async with ctx.sessionmaker() as session:
        rows = {
            row.permit_number: row
            for row in (
                await session.scalars(
                    select(WatchedPermit).where(WatchedPermit.jurisdiction == "rc")
                )
            ).all()
        }
    assert set(rows) == {"A", "B", "C"}
    assert rows["A"].next_check_at == later
    assert rows["B"].next_check_at == later
    assert rows["C"].next_check_at == now
    assert rows["C"].last_check_error == "feed: down"
    assert rows["A"].last_check_error is None
    async with ctx.transaction() as session:
        await session.execute(delete(WatchedPermit).where(WatchedPermit.jurisdiction == "rc"))
