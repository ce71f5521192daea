"""Authentication as a domain service: an API key in, a `Principal` out, or the one refusal
(401 invalid_api_key).

Transport stays with the callers: REST reads `X-API-Key` (usage/auth_dependencies.py), the
tool server reads `Authorization: Bearer` or `X-API-Key` (mcp/auth.py), GET status reads the
key through the short in-process key cache. What a key means, and how a refused one is worded,
lives here only, so the REST endpoints, the fast route and the tool server cannot drift apart.
A key cached by this process may have been deactivated by another (the CLI): whoever finds out
(a reservation's own condition, a sandbox call's check) refuses through `refuse_deactivated`,
which also drops the key from every cache of this process.
"""

from __future__ import annotations

from typing import NoReturn

from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from permitapi.account import repository
from permitapi.account.key_cache import KeyCache
from permitapi.account.key_caches import invalidate_everywhere
from permitapi.account.service import Principal, resolve_key
from permitapi.errors import Unauthorized

INVALID_KEY_CODE = "invalid_api_key"


def invalid_key() -> Unauthorized:
    return Unauthorized("The API key is invalid or deactivated.", code=INVALID_KEY_CODE)


def missing_key(what: str) -> Unauthorized:
    """`what`: the header (or credential) the transport expected, as the client should read it."""
    return Unauthorized(f"Missing {what}.", code=INVALID_KEY_CODE)


async def authenticate(session: AsyncSession, raw_key: str) -> Principal:
    """The principal of an active key, read now; raises invalid_api_key otherwise."""
    principal = await resolve_key(session, raw_key.strip())
    if principal is None:
        raise invalid_key()
    return principal


async def authenticate_cached(
    keys: KeyCache, maker: async_sessionmaker[AsyncSession], raw_key: str
) -> Principal:
    """`authenticate` through the in-process key cache (status lookups): a deactivation by
    another process is caught by the caller's reservation or `ensure_active`."""
    principal = await keys.resolve(maker, raw_key.strip())
    if principal is None:
        raise invalid_key()
    return principal


def refuse_deactivated(principal: Principal) -> NoReturn:
    """The key was deactivated (or deleted) since this process cached it: forget it, refuse."""
    invalidate_everywhere(principal.key_hash)
    raise invalid_key()


async def ensure_active(session: AsyncSession, principal: Principal) -> None:
    """Refuse a key deactivated since its principal was resolved (one primary-key read)."""
    if not await repository.key_is_active(session, principal.api_key_id):
        refuse_deactivated(principal)
