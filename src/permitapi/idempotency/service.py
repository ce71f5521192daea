"""Idempotency-Key rules (draft-ietf-httpapi-idempotency-key-header), independent of HTTP.

A request with a key first *claims* (scope, key) by inserting a `processing` row. Then:

    no row yet                      → claim it, run the request
    row expired (24 h response, or  → take it over, run the request
      a lapsed processing lock)
    different fingerprint           → 422 idempotency_key_reuse
    same fingerprint, processing    → 409 idempotency_key_processing (retry_after)
    same fingerprint, completed     → replay the stored response

After the run, a 2xx response is stored for IDEMPOTENT_RESPONSE_RETENTION and anything else
deletes the claim, so the key can be used again. The caller owns the transactions: claim,
completion and abandonment each run in their own short transaction, so concurrent requests see
the claim as soon as it is made.
"""

from __future__ import annotations

import hashlib
import math
from dataclasses import dataclass
from datetime import datetime, timedelta

import orjson
from sqlalchemy.ext.asyncio import AsyncSession

from permitapi.account.plans import IDEMPOTENT_RESPONSE_RETENTION
from permitapi.errors import BadRequest, Conflict, Unprocessable, invalid_parameter
from permitapi.idempotency import repository
from permitapi.idempotency.repository import PROCESSING
from permitapi.kit.ids import new_token, sha256_hex

HEADER = "Idempotency-Key"
MAX_KEY_LENGTH = 255
# Longer than any request of this service takes; a request that crashed mid-flight blocks its
# key for at most this long, after which a retry runs it again.
LOCK_TIMEOUT = timedelta(seconds=60)
# What a client is told to wait while the first request runs: requests finish in well under a
# second, and the draft wants the client simply to retry with the same key and body.
PROCESSING_RETRY_AFTER_SECONDS = 1
# A claim can vanish between our insert and our read (its request failed and deleted it);
# after this many rounds the race is reported as "processing" rather than looping on.
_CLAIM_ATTEMPTS = 4


@dataclass(frozen=True, slots=True)
class Claim:
    """This request holds (scope, key) and must complete or abandon it."""

    row_id: int
    lock_token: str


@dataclass(frozen=True, slots=True)
class StoredResponse:
    status: int
    headers: list[tuple[str, str]]
    body: bytes


def _invalid_key(message: str) -> BadRequest:
    return invalid_parameter(HEADER, message, code="invalid_idempotency_key", location="header")


def _unquote_sf_string(value: str) -> str:
    """The content of an RFC 8941 sf-string such as `"abc"` (escapes: \\" and \\\\)."""
    out: list[str] = []
    chars = iter(value[1:-1])
    for char in chars:
        if char == "\\":
            escaped = next(chars, "")
            if escaped not in ('"', "\\"):
                raise _invalid_key('only \\" and \\\\ may be escaped in a quoted key')
            out.append(escaped)
        elif char == '"':
            raise _invalid_key("an unescaped quote inside a quoted key")
        else:
            out.append(char)
    return "".join(out)


def parse_key(values: list[str]) -> str:
    """The key from the header value(s): a bare token or the draft's quoted sf-string form.

    Raises 400 invalid_idempotency_key for a repeated header, an empty or over-long key, and
    characters outside printable ASCII (or a comma or quote in the bare form, which would make
    the value ambiguous as a structured-field list).
    """
    if len(values) != 1:
        raise _invalid_key("send the header once")
    raw = values[0].strip()
    if len(raw) >= 2 and raw.startswith('"') and raw.endswith('"'):
        key = _unquote_sf_string(raw)
    elif any(char in raw for char in ',"'):
        raise _invalid_key("a bare key may not contain commas or quotes; quote it as an sf-string")
    else:
        key = raw
    if not 1 <= len(key) <= MAX_KEY_LENGTH:
        raise _invalid_key(f"must be 1 to {MAX_KEY_LENGTH} characters")
    if any(not 0x20 <= ord(char) <= 0x7E for char in key):
        raise _invalid_key("must be printable ASCII")
    return key


def fingerprint(method: str, path: str, query: str, body: bytes) -> str:
    """SHA-256 over method, path, query and the canonical body.

    A JSON body is canonicalised (sorted keys, no insignificant whitespace), so a retry that
    re-serialises the same object matches; any other body is compared byte for byte."""
    try:
        canonical = orjson.dumps(orjson.loads(body), option=orjson.OPT_SORT_KEYS) if body else b""
    except orjson.JSONDecodeError:
        canonical = body
    digest = hashlib.sha256(f"{method.upper()}\n{path}\n{query}\n".encode())
    digest.update(canonical)
    return digest.hexdigest()


def scope_of(api_key_hash: str | None, client_address: str | None) -> str:
    """Whose stored responses a key can reach: the API key's, else the client address's."""
    if api_key_hash is not None:
        return f"key:{api_key_hash}"
    return f"ip:{sha256_hex(client_address or 'unknown')}"


def _decode_headers(raw: str | None) -> list[tuple[str, str]]:
    return [(str(name), str(value)) for name, value in orjson.loads(raw or "[]")]


async def claim(
    session: AsyncSession, *, scope: str, key: str, fingerprint: str, now: datetime
) -> Claim | StoredResponse:
    """Claim (scope, key) for this request, or return the response stored for it.

    Raises 409 idempotency_key_processing while another request holds the claim and
    422 idempotency_key_reuse when the key was used for a different request."""
    for _ in range(_CLAIM_ATTEMPTS):
        token = new_token("", 16)
        locked_until = now + LOCK_TIMEOUT
        row_id = await repository.insert_processing(
            session,
            scope=scope,
            idempotency_key=key,
            fingerprint=fingerprint,
            lock_token=token,
            now=now,
            locked_until=locked_until,
        )
        if row_id is not None:
            return Claim(row_id, token)
        row = await repository.find(session, scope, key)
        if row is None:
            continue  # the holder failed and released the key between our two statements
        if row.expires_at <= now:
            if await repository.take_over_expired(
                session,
                row.id,
                fingerprint=fingerprint,
                lock_token=token,
                now=now,
                locked_until=locked_until,
            ):
                return Claim(row.id, token)
            continue
        if row.request_fingerprint != fingerprint:
            raise Unprocessable(
                "This Idempotency-Key was already used with a different request; "
                "use a new key for a new request.",
                code="idempotency_key_reuse",
            )
        if row.state == PROCESSING:
            raise _processing(row.locked_until, now)
        assert row.response_status is not None
        return StoredResponse(
            row.response_status, _decode_headers(row.response_headers), row.response_body or b""
        )
    raise _processing(now + timedelta(seconds=PROCESSING_RETRY_AFTER_SECONDS), now)


def _processing(locked_until: datetime, now: datetime) -> Conflict:
    lock_left = math.ceil((locked_until - now).total_seconds())
    retry_after = max(1, min(PROCESSING_RETRY_AFTER_SECONDS, lock_left))
    return Conflict(
        "A request with this Idempotency-Key is still being processed. "
        f"Retry after {retry_after} seconds with the same key and body.",
        code="idempotency_key_processing",
        extra={"retry_after": retry_after},
        headers={"Retry-After": str(retry_after)},
    )


async def complete(
    session: AsyncSession, held: Claim, response: StoredResponse, now: datetime
) -> bool:
    """Store the 2xx response of the claimed request; False if the claim was lost meanwhile
    (its lock lapsed and another request took the key over)."""
    return await repository.complete(
        session,
        held.row_id,
        held.lock_token,
        status=response.status,
        headers=orjson.dumps(response.headers).decode(),
        body=response.body,
        expires_at=now + IDEMPOTENT_RESPONSE_RETENTION,
    )


async def abandon(session: AsyncSession, held: Claim) -> None:
    """Release the claim of a request that did not succeed: nothing is stored."""
    await repository.delete_claim(session, held.row_id, held.lock_token)


async def purge_expired(session: AsyncSession, now: datetime) -> int:
    """Delete expired stored responses and lapsed claims; returns how many."""
    return await repository.purge_expired(session, now)
