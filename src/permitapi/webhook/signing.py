"""Standard Webhooks signing: `whsec_` secrets and the headers of one delivery attempt.

The signed content is `<webhook-id>.<webhook-timestamp>.<body>` over the exact bytes sent;
the HMAC key is the base64-decoded secret after its `whsec_` prefix. During a rotation overlap
one `v1` entry per valid secret goes into the one space-separated `webhook-signature` header,
so receivers verifying with either secret accept the delivery.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import secrets
from collections.abc import Sequence
from typing import Final

WHSEC_PREFIX: Final = "whsec_"
# Standard Webhooks asks for 24-64 random bytes; 32 matches an HMAC-SHA256 block's key size.
SECRET_BYTES: Final = 32
STORE_WARNING: Final = (
    "Store this secret now: it is shown only once (at creation and at rotation). Verify every "
    "delivery with it (Standard Webhooks: HMAC-SHA256 over '<webhook-id>.<webhook-timestamp>."
    "<raw body>', keyed with the base64-decoded part after 'whsec_')."
)


def new_secret() -> str:
    return WHSEC_PREFIX + base64.b64encode(secrets.token_bytes(SECRET_BYTES)).decode("ascii")


def secret_key(secret: str) -> bytes:
    return base64.b64decode(secret.removeprefix(WHSEC_PREFIX))


def v1_signature(secret: str, message_id: str, timestamp: int, body: bytes) -> str:
    signed = f"{message_id}.{timestamp}.".encode() + body
    digest = hmac.new(secret_key(secret), signed, hashlib.sha256).digest()
    return "v1," + base64.b64encode(digest).decode("ascii")


def legacy_signature(secret: str, body: bytes) -> str:
    """`X-Service-Signature`: hex HMAC-SHA256 of the raw body keyed with the secret *string*."""
    return hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()


def delivery_headers(
    *,
    secrets_in_force: Sequence[str],
    delivery_id: str,
    event_type: str,
    timestamp: int,
    body: bytes,
) -> dict[str, str]:
    """Every header of one attempt. `secrets_in_force` lists the current secret first, then the
    previous one while its overlap lasts; the legacy header uses the current secret only."""
    current = secrets_in_force[0]
    return {
        "content-type": "application/json",
        "webhook-id": delivery_id,
        "webhook-timestamp": str(timestamp),
        "webhook-signature": " ".join(
            v1_signature(secret, delivery_id, timestamp, body) for secret in secrets_in_force
        ),
        "x-service-signature": legacy_signature(current, body),
        "x-service-event": event_type,
    }
