"""Identifiers and secret tokens."""

from __future__ import annotations

import hashlib
import secrets
import uuid


def new_uuid() -> str:
    return str(uuid.uuid4())


def new_token(prefix: str, nbytes: int = 24) -> str:
    return prefix + secrets.token_urlsafe(nbytes)


def sha256_hex(value: str) -> str:
    return hashlib.sha256(value.encode()).hexdigest()
