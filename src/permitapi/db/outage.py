"""Telling "the database is unreachable" apart from every other failure.

While PostgreSQL restarts, fails over or is unreachable, requests must get a prompt 503
`database_unavailable` problem, not a 500: the client should retry, and nothing is wrong with
the request. The driver's exception arrives wrapped (SQLAlchemy's DBAPIError around the
adapter's error around asyncpg's), so the whole cause chain is inspected.
"""

from __future__ import annotations

import errno
from typing import Final

import asyncpg  # type: ignore[import-untyped]
from sqlalchemy.exc import DBAPIError

# asyncpg: refused or reset sockets surface as OSError subclasses; a server shutting down or
# starting up answers with the operator-intervention SQLSTATE class (57P01 admin shutdown,
# 57P03 cannot connect now); a dropped connection is ConnectionDoesNotExistError or an
# InterfaceError ("connection is closed").
OUTAGE_TYPES: Final[tuple[type[BaseException], ...]] = (
    ConnectionError,
    asyncpg.PostgresConnectionError,
    asyncpg.exceptions.OperatorInterventionError,
    asyncpg.exceptions.ConnectionDoesNotExistError,
    asyncpg.InterfaceError,
)
# "Could not connect" surfaces as a plain OSError (errno ECONNREFUSED and friends) from
# asyncio's create_connection when several addresses were tried.
OUTAGE_ERRNOS: Final = frozenset(
    {errno.ECONNRESET, errno.ETIMEDOUT, errno.ECONNREFUSED, errno.EHOSTUNREACH}
)


def is_database_outage(error: BaseException) -> bool:
    seen: set[int] = set()
    current: BaseException | None = error
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        if isinstance(current, DBAPIError) and current.connection_invalidated:
            return True
        if isinstance(current, OUTAGE_TYPES):
            return True
        if isinstance(current, OSError) and current.errno in OUTAGE_ERRNOS:
            return True
        orig = getattr(current, "orig", None)
        current = (
            orig if isinstance(orig, BaseException) else (current.__cause__ or current.__context__)
        )
    return False
