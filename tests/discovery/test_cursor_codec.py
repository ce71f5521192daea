"""kit.cursors: signed, versioned, expiring, bound tokens."""

from __future__ import annotations

import base64
from datetime import UTC, datetime, timedelta

import pytest

from permitapi.kit.cursors import CursorCodec, CursorError

NOW = datetime(2026, 11, 22, 12, 0, tzinfo=UTC)
LIFE = timedelta(minutes=15)


def reason(codec: CursorCodec, token: str, *, binding: str = "b", now: datetime = NOW) -> str:
    with pytest.raises(CursorError) as caught:
        codec.decode(token, binding=binding, now=now)
    return caught.value.reason


def test_round_trip_until_expiry() -> None:
    codec = CursorCodec("secret", "p", LIFE)
    token = codec.encode({"o": {"a": 3, "b": None}}, binding="b", now=NOW)
    assert token.startswith("v1.")
    assert codec.decode(token, binding="b", now=NOW + LIFE) == {"o": {"a": 3, "b": None}}
    assert reason(codec, token, now=NOW + LIFE + timedelta(seconds=1)) == "expired"


def test_tampering_foreign_keys_purposes_and_bindings_are_refused() -> None:
    codec = CursorCodec("secret", "p", LIFE)
    token = codec.encode({"o": 1}, binding="b", now=NOW)
    version, body, signature = token.split(".")
    forged = base64.urlsafe_b64encode(b'{"iat":1,"bnd":"b","st":{"o":99}}').decode().rstrip("=")
    assert reason(codec, f"{version}.{forged}.{signature}") == "signature"
    flipped = signature[:-1] + ("A" if signature[-1] != "A" else "B")
    assert reason(codec, f"{version}.{body}.{flipped}") == "signature"
    assert reason(CursorCodec("other-secret", "p", LIFE), token) == "signature"
    assert reason(CursorCodec("secret", "other-purpose", LIFE), token) == "signature"
    assert reason(codec, token, binding="c") == "binding"
    assert reason(codec, "v2." + body + "." + signature) == "version"
    for junk in ("", "abc", "v1.x", "v1.a.b.c", "v1.é.x", "x" * 5000):
        assert reason(codec, junk) in {"malformed", "version", "signature"}


def test_a_token_from_the_future_beyond_grace_is_refused() -> None:
    codec = CursorCodec("secret", "p", LIFE)
    token = codec.encode({}, binding="b", now=NOW + timedelta(minutes=5))
    assert reason(codec, token) == "expired"
