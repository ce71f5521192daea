"""Discovery cursors: per-source offsets, signed and bound to filters, scope and API key.

Merging two live sources newest first consumes a prefix of each source's own ordering, so the
position of a page boundary is one offset per source; `None` marks a source already read to
its end (it is not asked again).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import datetime

from permitapi.account.plans import DISCOVERY_CURSOR_LIFETIME
from permitapi.discovery.filters import SearchQuery
from permitapi.errors import invalid_parameter
from permitapi.kit.cursors import CursorCodec, CursorError, binding_digest, int_in

log = logging.getLogger("permitapi.discovery")
PURPOSE = "discovery-search"
# No source has this many matching rows; a larger offset is a forged cursor, and sent on it
# would be a portal error blamed on the portal.
MAX_OFFSET = 10_000_000


@dataclass(frozen=True, slots=True)
class Position:
    offsets: dict[str, int | None]  # per selected source; None: exhausted

    @classmethod
    def start(cls, sources: tuple[str, ...]) -> Position:
        return cls({source: 0 for source in sources})


def binding(query: SearchQuery, api_key_id: str) -> str:
    # Bound to the key too: a cursor leaked from one customer's logs is useless to another.
    return binding_digest(PURPOSE, query.filters.canonical(), ",".join(query.sources), api_key_id)


def codec(secret: str) -> CursorCodec:
    return CursorCodec(secret, PURPOSE, DISCOVERY_CURSOR_LIFETIME)


def invalid_cursor(message: str) -> Exception:
    return invalid_parameter(
        "cursor", f"{message}; restart from the first page", code="invalid_cursor"
    )


def decode(secret: str, query: SearchQuery, api_key_id: str, token: str, now: datetime) -> Position:
    """The position a cursor points at, or 400 invalid_cursor."""
    try:
        state = codec(secret).decode(token, binding=binding(query, api_key_id), now=now)
    except CursorError as exc:
        log.info("discovery cursor refused: %s", exc.reason)
        message = {
            "expired": "the cursor has expired (cursors live 15 minutes)",
            "binding": "the cursor belongs to other filters, scope or API key",
        }.get(exc.reason, "the cursor is not valid")
        raise invalid_cursor(message) from None
    offsets = state.get("o")
    if not isinstance(offsets, dict) or set(offsets) != set(query.sources):
        raise invalid_cursor("the cursor is not valid")
    for value in offsets.values():
        if value is not None and not int_in(value, 0, MAX_OFFSET):
            raise invalid_cursor("the cursor is not valid")
    if all(value is None for value in offsets.values()):
        raise invalid_cursor("the cursor is not valid")
    return Position(dict(offsets))


def encode(
    secret: str, query: SearchQuery, api_key_id: str, position: Position, now: datetime
) -> str:
    return codec(secret).encode(
        {"o": position.offsets}, binding=binding(query, api_key_id), now=now
    )
