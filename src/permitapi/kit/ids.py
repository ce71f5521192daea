"""Identifiers and secret tokens."""

from __future__ import annotations

import hashlib
import os
import secrets
import socket
import uuid


def new_uuid() -> str:
    return str(uuid.uuid4())


def new_token(prefix: str, nbytes: int = 24) -> str:
    return prefix + secrets.token_urlsafe(nbytes)


def sha256_hex(value: str) -> str:
    return hashlib.sha256(value.encode()).hexdigest()


def new_owner_id() -> str:
    """Who holds a lease or a claimed row (pass leases, refresh claims, operation and webhook
    deliveries): host and process for whoever reads the table, plus a random part so that two
    holders in one process never take each other's claims."""
    return f"{socket.gethostname()[:24]}:{os.getpid()}:{uuid.uuid4().hex[:8]}"
