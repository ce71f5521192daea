"""Permit events from observations: whenever a fetched representation of a watched permit is
stored (a status lookup, a batch, a forced refresh, an operation or the daily check: they all
store through `permit.lookup.refresh`), it is compared with the one it replaces and the events the
change stands for are emitted to the keys watching the permit, in the storing transaction.

    status_change          the portal's status text differs from the previous fetch
    permit_approved        the normalised status moves into issued, approved (pending issue),
                           finaled, finaled (conditional) or occupancy
    permit_denied          ... into expired or cancelled (the service's vocabulary has no
                           separate denied or withdrawn: portals' texts for them map there)
    corrections_required   ... into applicant_action (corrections issued, awaiting applicant)
    inspection_complete    one per completed inspection (with a result) not in the previous
                           representation

A first representation (nothing to compare with) emits nothing. A terminal status (expired,
cancelled) completes the watches of the permit after their final events: the slot is free and
the permit may be watched again.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Final

from sqlalchemy.ext.asyncio import AsyncSession

from permitapi.event import service as events
from permitapi.event.examples import status_transition
from permitapi.kit.clock import isoformat_z
from permitapi.permit import repository as permits
from permitapi.permit.codec import decode_snapshot
from permitapi.permit.observers import AfterStore
from permitapi.sources.base import Inspection, NormalizedStatus, PermitSnapshot
from permitapi.watch import repository
from permitapi.watch.models import Watch

APPROVED: Final = frozenset(
    {
        NormalizedStatus.ISSUED,
        NormalizedStatus.APPROVED_PENDING_ISSUE,
        NormalizedStatus.FINALED,
        NormalizedStatus.FINALED_CONDITIONAL,
        NormalizedStatus.OCCUPANCY,  # a certificate of occupancy is the final approval
    }
)
DENIED: Final = frozenset({NormalizedStatus.EXPIRED, NormalizedStatus.CANCELLED})
TERMINAL: Final = DENIED
CORRECTIONS: Final = frozenset({NormalizedStatus.APPLICANT_ACTION})


@dataclass(frozen=True, slots=True)
class Before:
    """What was stored before this observation."""

    raw_status: str | None
    normalized_status: str | None
    inspections: tuple[Inspection, ...] | None


@dataclass(frozen=True, slots=True)
class Watched:
    jurisdiction: str
    permit_number: str
    before: Before | None
    watches: tuple[Watch, ...]


def _inspection_key(item: Inspection) -> tuple[str, str | None, str | None]:
    return (item.type, item.date.isoformat() if item.date else None, item.result)


def changes(
    before: Before, after: PermitSnapshot, now: datetime
) -> list[tuple[str, dict[str, Any]]]:
    """The (event, data) pairs one observation stands for, in a stable order."""
    found: list[tuple[str, dict[str, Any]]] = []
    old_norm = before.normalized_status
    new_norm = after.status.value
    transition = status_transition(
        old_status=old_norm,
        new_status=new_norm,
        old_portal_status=before.raw_status,
        new_portal_status=after.raw_status or "",
        changed_at=now,
    )
    if (after.raw_status or "") != (before.raw_status or ""):
        found.append((events.STATUS_CHANGE, transition))
    if new_norm != old_norm:
        if after.status in APPROVED:
            found.append((events.PERMIT_APPROVED, transition))
        if after.status in DENIED:
            found.append((events.PERMIT_DENIED, transition))
        if after.status in CORRECTIONS:
            found.append(
                (
                    events.CORRECTIONS_REQUIRED,
                    {
                        "status": new_norm,
                        "portal_status": after.raw_status,
                        "flagged_at": isoformat_z(now),
                        "open_conditions": [
                            {"type": c.group or c.stage or "condition", "description": c.name}
                            for c in (after.conditions or [])
                            if not c.is_met
                        ],
                    },
                )
            )
    if before.inspections is not None and after.inspections:
        seen = {_inspection_key(item) for item in before.inspections}
        completed = [item for item in after.inspections if item.result]
        for item in completed:
            if _inspection_key(item) in seen:
                continue
            found.append(
                (
                    events.INSPECTION_COMPLETE,
                    {
                        "inspection": {
                            "type": item.type,
                            "date": item.date.isoformat() if item.date else None,
                            "result": item.result,
                            "inspector": item.inspector,
                        },
                        "completed_inspections": len(completed),
                        "observed_at": isoformat_z(now),
                    },
                )
            )
    return found


async def watched_before(
    session: AsyncSession, identities: Sequence[tuple[str, str]]
) -> list[Watched]:
    """The watched permits among `identities` and their representations before this store:
    one query when none is watched (the common case of a lookup)."""
    watches = await repository.watchers_of(session, identities)
    if not watches:
        return []
    by_permit: dict[tuple[str, str], list[Watch]] = {}
    for watch in watches:
        by_permit.setdefault((watch.jurisdiction, watch.permit_number), []).append(watch)
    found = []
    for (jurisdiction, number), its_watches in sorted(by_permit.items()):
        row = await permits.get_by_identity(session, jurisdiction, number)
        before = None
        if row is not None and row.snapshot:
            snapshot = decode_snapshot(row.snapshot)
            before = Before(
                row.raw_status,
                row.normalized_status,
                tuple(snapshot.inspections) if snapshot.inspections is not None else None,
            )
        found.append(Watched(jurisdiction, number, before, tuple(its_watches)))
    return found


async def emit_changes(
    session: AsyncSession,
    watched: Sequence[Watched],
    stored: Mapping[tuple[str, str], PermitSnapshot],
    now: datetime,
) -> int:
    """Emit the events of each watched permit that was just stored; returns how many."""
    emitted = 0
    for item in watched:
        after = stored.get((item.jurisdiction, item.permit_number))
        if after is None or item.before is None:
            continue
        found = changes(item.before, after, now)
        recipients = sorted({watch.api_key_id for watch in item.watches})
        for event_type, data in found:
            await events.emit(
                session,
                event_type,
                data=data,
                occurred_at=now,
                recipients=recipients,
                permit_number=item.permit_number,
                jurisdiction=item.jurisdiction,
            )
            emitted += 1
        watch_ids = [watch.watch_id for watch in item.watches]
        if found:
            await repository.touch_watches(session, watch_ids, now)
        if after.status in TERMINAL:
            await repository.complete_watches(session, watch_ids, now)
    return emitted


async def observe_store(
    session: AsyncSession, identities: Sequence[tuple[str, str]]
) -> AfterStore | None:
    """The store observer (`permit.observers`) the composition module registers: the watched
    permits among `identities` are read before the store and their events emitted after it."""
    watched = await watched_before(session, identities)
    if not watched:
        return None

    async def emit_after_store(
        session: AsyncSession, stored: Mapping[tuple[str, str], PermitSnapshot], now: datetime
    ) -> int:
        return await emit_changes(session, watched, stored, now)

    return emit_after_store
