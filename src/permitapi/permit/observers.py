"""Who is told when fetched permit representations are stored (`permit.refresh`): observers
registered by the composition module, so a domain that reacts to a store (the watches:
`watch.observation`) is imported by nothing here.

An observer is asked before the store, with the identities about to be stored, because it may
need what they replace; it answers with what to do once they are stored (in the same
transaction), or None when none of them concerns it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Protocol

from sqlalchemy.ext.asyncio import AsyncSession

from permitapi.sources.base import PermitSnapshot


class AfterStore(Protocol):
    async def __call__(
        self,
        session: AsyncSession,
        stored: Mapping[tuple[str, str], PermitSnapshot],
        now: datetime,
    ) -> object: ...


class StoreObserver(Protocol):
    async def __call__(
        self, session: AsyncSession, identities: Sequence[tuple[str, str]]
    ) -> AfterStore | None: ...


_observers: list[StoreObserver] = []


def observe_stores(observer: StoreObserver) -> None:
    """Ask `observer` about every store from now on (once, however often it is registered)."""
    if observer not in _observers:
        _observers.append(observer)


async def before_store(
    session: AsyncSession, identities: Sequence[tuple[str, str]]
) -> list[AfterStore]:
    """What the observers will do once `identities` are stored."""
    pending = []
    for observer in _observers:
        after = await observer(session, identities)
        if after is not None:
            pending.append(after)
    return pending
