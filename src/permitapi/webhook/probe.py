"""POST /webhooks/{id}/test and /simulate: one signed request, made now, answered inline.

Neither is stored as a delivery, retried, or counted toward disabling the webhook. `test`
sends a synthetic `test` event (a reachability ping); `simulate` sends exactly what a live
delivery of the chosen event would send (a realistic `data`), plus `X-Service-Test: true`.
"""

from __future__ import annotations

from typing import Any

import orjson

from permitapi.account.service import Principal
from permitapi.context import AppContext
from permitapi.event.examples import EXAMPLE_JURISDICTION, EXAMPLE_PERMIT_NUMBER, example_data
from permitapi.kit.clock import isoformat_z
from permitapi.kit.ids import new_uuid
from permitapi.webhook import attempt, fanout, service
from permitapi.webhook.destination import Resolver
from permitapi.webhook.models import Webhook
from permitapi.webhook.signed_headers import signed_request

TEST_EVENT = "test"


async def _load(ctx: AppContext, principal: Principal, webhook_id: str) -> Webhook:
    async with ctx.sessionmaker() as session:
        return await service.owned(session, principal, webhook_id)


async def _send(
    ctx: AppContext,
    webhook: Webhook,
    event_type: str,
    body: bytes,
    delivery_id: str,
    resolver: Resolver | None,
    extra_headers: dict[str, str] | None = None,
) -> attempt.AttemptResult:
    headers = signed_request(webhook, delivery_id, event_type, body, ctx.clock.now())
    headers.update(extra_headers or {})
    async with attempt.new_client() as client:
        return await attempt.send(
            client,
            webhook.url,
            headers,
            body,
            allow_loopback_http=ctx.settings.allow_loopback_webhooks,
            resolver=resolver,
        )


async def ping(
    ctx: AppContext, principal: Principal, webhook_id: str, resolver: Resolver | None = None
) -> dict[str, Any]:
    webhook = await _load(ctx, principal, webhook_id)
    now = ctx.clock.now()
    delivery_id = new_uuid()
    body = orjson.dumps(
        {
            "event_id": new_uuid(),
            "delivery_id": delivery_id,
            "event": TEST_EVENT,
            "permit_number": None,
            "jurisdiction": None,
            "jurisdiction_display": None,
            "data": {"message": "Test delivery from permitapi", "webhook_id": webhook_id},
            "timestamp": isoformat_z(now),
        }
    )
    result = await _send(ctx, webhook, TEST_EVENT, body, delivery_id, resolver)
    return {
        "success": result.acknowledged,
        "status_code": result.status_code,
        "error": result.error,
    }


async def simulate(
    ctx: AppContext,
    principal: Principal,
    webhook_id: str,
    event_type: str,
    resolver: Resolver | None = None,
) -> dict[str, Any]:
    webhook = await _load(ctx, principal, webhook_id)
    now = ctx.clock.now()
    delivery_id = new_uuid()
    jurisdiction = (
        webhook.jurisdiction_filter[0] if webhook.jurisdiction_filter else EXAMPLE_JURISDICTION
    )
    body = fanout.envelope_bytes(
        event_id=new_uuid(),
        delivery_id=delivery_id,
        event_type=event_type,
        permit_number=EXAMPLE_PERMIT_NUMBER,
        jurisdiction=jurisdiction,
        data=example_data(event_type, now),
        timestamp=now,
    )
    result = await _send(
        ctx, webhook, event_type, body, delivery_id, resolver, {"x-service-test": "true"}
    )
    if result.status_code is None:
        return {"ok": True, "delivery": {"status_code": 0, "error": result.error}}
    return {
        "ok": True,
        "delivery": {"status_code": result.status_code, "body_preview": result.body_preview},
    }
