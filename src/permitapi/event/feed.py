"""GET /events: a key's canonical events, oldest first by ingestion order.

The cursor is the checkpoint: the `seq` and append time of the last event a page returned,
signed and bound to the key. A page is a keyset walk after that seq; an empty poll answers the
cursor it was given, unchanged. A checkpoint whose event is past the 30-day retention is
refused (400 invalid_cursor): the events after it may already be gone, and restarting without
a cursor from the oldest retained event is the honest answer.
"""

from __future__ import annotations

import logging
from datetime import datetime, timedelta
from typing import Any, Final

from sqlalchemy.ext.asyncio import AsyncSession

from permitapi.account.entitlements import require_live_key
from permitapi.account.plans import EVENTS_RETENTION
from permitapi.account.service import Principal
from permitapi.errors import invalid_parameter
from permitapi.event import repository
from permitapi.event.models import DomainEvent
from permitapi.kit.clock import isoformat_z
from permitapi.kit.cursors import MAX_BIGINT, CursorCodec, CursorError, int_in
from permitapi.sources.registry import Directory

log = logging.getLogger("permitapi.event.feed")

PURPOSE: Final = "events-feed"
DEFAULT_LIMIT: Final = 50
MAX_LIMIT: Final = 200
# The event's age decides expiry; the token's own lifetime is only a backstop past it.
_TOKEN_LIFETIME: Final = EVENTS_RETENTION + timedelta(days=1)


def _codec(secret: str) -> CursorCodec:
    return CursorCodec(secret, PURPOSE, _TOKEN_LIFETIME)


def _invalid(message: str) -> Exception:
    return invalid_parameter(
        "cursor", f"{message}; poll without a cursor to restart", code="invalid_cursor"
    )


def _checkpoint(secret: str, api_key_id: str, token: str, now: datetime) -> tuple[int, datetime]:
    try:
        state = _codec(secret).decode(token, binding=api_key_id, now=now)
    except CursorError as exc:
        log.info("events cursor refused: %s", exc.reason)
        if exc.reason == "binding":
            raise _invalid("the cursor belongs to another API key") from None
        if exc.reason == "expired":
            raise _invalid("the cursor's event has expired (events are kept 30 days)") from None
        raise _invalid("the cursor is not valid") from None
    seq, appended = state.get("s"), state.get("t")
    # An event appended after the cursor was read back (beyond the codec's minute of grace) is
    # as forged as a seq no BIGINT holds.
    latest = int(now.timestamp()) + 60
    if not int_in(seq, 1, MAX_BIGINT) or not int_in(appended, 0, latest):
        raise _invalid("the cursor is not valid")
    appended_at = datetime.fromtimestamp(appended, tz=now.tzinfo)
    if appended_at < now - EVENTS_RETENTION:
        raise _invalid("the cursor's event has expired (events are kept 30 days)")
    return seq, appended_at


def entry(event: DomainEvent, directory: Directory) -> dict[str, Any]:
    display = None
    if event.jurisdiction is not None:
        found = directory.get(event.jurisdiction)
        display = found.display_name if found is not None else event.jurisdiction
    return {
        "event_id": event.event_id,
        "event": event.event_type,
        "permit_number": event.permit_number,
        "jurisdiction": event.jurisdiction,
        "jurisdiction_display": display,
        "data": event.data,
        "occurred_at": isoformat_z(event.occurred_at),
        "created_at": isoformat_z(event.created_at),
    }


async def page(
    session: AsyncSession,
    principal: Principal,
    directory: Directory,
    *,
    secret: str,
    cursor: str | None,
    limit: int,
    now: datetime,
) -> dict[str, Any]:
    require_live_key(principal, "The events feed and webhooks")
    after_seq = 0
    if cursor is not None:
        after_seq, _ = _checkpoint(secret, principal.api_key_id, cursor, now)
    # One row more than asked tells whether another page is ready now.
    rows = await repository.feed_page(
        session,
        principal.api_key_id,
        after_seq=after_seq,
        not_before=now - EVENTS_RETENTION,
        limit=limit + 1,
    )
    has_more = len(rows) > limit
    rows = rows[:limit]
    if rows:
        last = rows[-1]
        next_cursor: str | None = _codec(secret).encode(
            {"s": last.seq, "t": int(last.created_at.timestamp())},
            binding=principal.api_key_id,
            now=now,
        )
    else:
        next_cursor = cursor
    return {
        "events": [entry(event, directory) for event in rows],
        "next_cursor": next_cursor,
        "has_more": has_more,
    }
