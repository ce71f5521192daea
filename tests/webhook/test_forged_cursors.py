"""Forged events-feed cursors: signed with the service secret (as by an attacker who learned
it), every decoded field out of range is 400 invalid_cursor, never a 500."""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
from typing import Any

import httpx

from permitapi.context import AppContext
from permitapi.event import feed
from permitapi.kit.clock import FrozenClock
from tests.conftest import TEST_SECRET
from tests.support.problems import assert_problem
from tests.webhook.conftest import new_key
from tests.webhook.test_delivery import emit


def forge(purpose: str, payload: dict[str, Any]) -> str:
    """A token signed exactly as kit/cursors.py signs, over any payload."""
    key = hmac.new(TEST_SECRET.encode(), f"cursor:{purpose}".encode(), "sha256").digest()
    # json, not orjson: a forger's integers need not fit in 64 bits.
    text = json.dumps(payload, separators=(",", ":")).encode()
    body = base64.urlsafe_b64encode(text).rstrip(b"=").decode()
    signed = f"v1.{body}"
    signature = hmac.new(key, signed.encode(), hashlib.sha256).digest()
    return f"{signed}.{base64.urlsafe_b64encode(signature).rstrip(b'=').decode()}"


async def test_forged_event_cursors_are_400(
    client: httpx.AsyncClient, ctx: AppContext, clock: FrozenClock
) -> None:
    key = await new_key(ctx)
    await emit(ctx, key)
    now = int(clock.now().timestamp())

    def token(state: dict[str, Any], iat: Any = now) -> str:
        return forge(feed.PURPOSE, {"iat": iat, "bnd": key.api_key_id, "st": state})

    # The forger's signature is right: a well-formed state is served.
    genuine = await client.get(
        "/api/v1/events", params={"cursor": token({"s": 1, "t": now})}, headers=key.headers
    )
    assert genuine.status_code == 200, genuine.text
    forged = [
        token({"s": 1, "t": -(10**15)}),
        token({"s": 1, "t": 2**63 - 1}),
        token({"s": 1, "t": now + 3600}),
        token({"s": 2**63, "t": now}),
        token({"s": 2**64, "t": now}),
        token({"s": 0, "t": now}),
        token({"s": -5, "t": now}),
        token({"s": True, "t": now}),
        token({"s": 1.0, "t": now}),
        token({"s": 1, "t": float(now)}),
        token({"s": "1", "t": now}),
        token({"s": 1}),
        token({"s": 1, "t": now}, iat=-1),
        token({"s": 1, "t": now}, iat=2**63 - 1),
        token({"s": 1, "t": now}, iat=True),
        token({"s": 1, "t": now}, iat=float(now)),
    ]
    for cursor in forged:
        response = await client.get(
            "/api/v1/events", params={"cursor": cursor}, headers=key.headers
        )
        assert_problem(response, 400, "invalid_cursor")
