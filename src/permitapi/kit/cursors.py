"""Signed, versioned, expiring opaque cursors (domain-free).

Format: `v1.<payload>.<signature>`, both parts unpadded base64url. The payload is compact JSON
holding the caller's state plus `iat` (issued at, Unix seconds) and `bnd` (a binding string the
caller derives from whatever the cursor must only be used with: filters, scope, key). The
signature is HMAC-SHA256 over `v1.<payload>` with a key derived from the service secret and a
purpose label, so a token minted for one purpose never verifies for another.

Every failure is one `CursorError` with a `reason` for logs; clients only ever learn "invalid".

A valid signature only proves the token was minted with the secret, and a secret can leak:
every decoded field is range-checked before use (`iat` here, the caller's state with
`int_in`), so a forged `t=-10**15` or `s=2**63` is a 400, never an overflow further down.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
from collections.abc import Mapping
from datetime import datetime, timedelta
from typing import Any, TypeGuard

import orjson

VERSION = "v1"
_MAX_TOKEN_LENGTH = 4096
# Unix seconds a timestamp in a cursor may hold: 1970-01-01 .. 9999-12-31.
MAX_TIMESTAMP = 253_402_300_799
# The largest integer SQL BIGINT columns (and so SQL parameters) hold.
MAX_BIGINT = 2**63 - 1


class CursorError(ValueError):
    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason  # malformed | version | signature | expired | binding


def _b64encode(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def _b64decode(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def int_in(value: object, low: int, high: int) -> TypeGuard[int]:
    """Whether a decoded value is an integer (not a bool, not a float) in low..high."""
    return type(value) is int and low <= value <= high


def binding_digest(*parts: str) -> str:
    """A short, order-sensitive digest of the values a cursor is bound to."""
    joined = "\x1f".join(parts).encode()
    return _b64encode(hashlib.sha256(joined).digest()[:18])


class CursorCodec:
    def __init__(self, secret: str, purpose: str, lifetime: timedelta) -> None:
        # A derived key: the raw secret also signs other things and must not be reusable here.
        self._key = hmac.new(secret.encode(), f"cursor:{purpose}".encode(), "sha256").digest()
        self.lifetime = lifetime

    def _sign(self, signed_part: str) -> str:
        return _b64encode(hmac.new(self._key, signed_part.encode(), "sha256").digest())

    def encode(self, state: Mapping[str, Any], *, binding: str, now: datetime) -> str:
        payload = {"iat": int(now.timestamp()), "bnd": binding, "st": dict(state)}
        signed_part = f"{VERSION}.{_b64encode(orjson.dumps(payload))}"
        return f"{signed_part}.{self._sign(signed_part)}"

    def decode(self, token: str, *, binding: str, now: datetime) -> dict[str, Any]:
        """The state of a valid token, else `CursorError`.

        Order matters: the signature is checked before anything in the payload is trusted.
        """
        if not token or len(token) > _MAX_TOKEN_LENGTH or not token.isascii():
            raise CursorError("malformed")
        parts = token.split(".")
        if len(parts) != 3:
            raise CursorError("malformed")
        version, body, signature = parts
        if version != VERSION:
            raise CursorError("version")
        if not hmac.compare_digest(signature, self._sign(f"{version}.{body}")):
            raise CursorError("signature")
        try:
            payload = orjson.loads(_b64decode(body))
        except (binascii.Error, ValueError) as exc:
            raise CursorError("malformed") from exc
        if not isinstance(payload, dict):
            raise CursorError("malformed")
        issued_at, bound, state = payload.get("iat"), payload.get("bnd"), payload.get("st")
        if not int_in(issued_at, 0, MAX_TIMESTAMP) or not isinstance(state, dict):
            raise CursorError("malformed")
        age = now.timestamp() - issued_at
        # A cursor from the future (clock skew between processes) gets a minute of grace only.
        if age > self.lifetime.total_seconds() or age < -60:
            raise CursorError("expired")
        if not isinstance(bound, str) or not hmac.compare_digest(bound, binding):
            raise CursorError("binding")
        return state
