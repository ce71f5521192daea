"""INSERT … ON CONFLICT DO NOTHING on both engines.

The unique constraint decides races, not a prior SELECT: whichever insert lands first wins and
the others see no row returned.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.ext.asyncio import AsyncSession


def insert_or_ignore(session: AsyncSession, table: Any, values: dict[str, Any]) -> Any:
    """An insert statement that does nothing when a unique constraint already holds the row.

    Add `.returning(...)` to learn whether this statement inserted (a row comes back) or not.
    """
    if session.get_bind().dialect.name == "postgresql":
        return postgresql.insert(table).values(values).on_conflict_do_nothing()
    return sqlite.insert(table).values(values).on_conflict_do_nothing()
