"""Webhook endpoints: registration, activity, secrets, delivery history, replay, test and
simulate. Free of credits; only test and simulate (which send a request now) count against the
per-minute burst window."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Body, Path, Query, Response

from permitapi.idempotency.route import idempotent_post
from permitapi.usage.auth_dependencies import Authenticated, AuthenticatedFree, Ctx
from permitapi.web.openapi import problem_responses
from permitapi.web.plain_int import PlainInt
from permitapi.webhook import probe, service
from permitapi.webhook.schemas import (
    DeliveryList,
    ReplayAccepted,
    SecretRotated,
    SimulateBody,
    SimulateResult,
    TestResult,
    WebhookCreate,
    WebhookCreated,
    WebhookDeleted,
    WebhookList,
    WebhookOut,
    WebhookUpdate,
)

router = APIRouter(tags=["webhooks"])

WebhookId = Annotated[str, Path(max_length=64, description="A webhook_id")]
DeliveryId = Annotated[str, Path(max_length=64, description="A delivery id")]


@idempotent_post(
    router,
    "/webhooks",
    status_code=201,
    response_model=WebhookCreated,
    summary="Register a webhook (the secret is shown only in this answer)",
    description="The URL must be https, without credentials, and its host must resolve only "
    "to public addresses (private, loopback, link-local, CGNAT, multicast, unspecified and "
    "their IPv4-mapped, NAT64 and numeric encodings are refused: 400 invalid_webhook_url). "
    "Unknown event names are 400 invalid_event, unknown slugs 400 invalid_jurisdiction. Active "
    "webhooks per key: free 1, developer 5, pro 10, enterprise 25 (400 webhook_limit_reached).",
    responses=problem_responses(400, 401, 403),
)
async def register_webhook(
    body: WebhookCreate, principal: AuthenticatedFree, ctx: Ctx, response: Response
) -> WebhookCreated:
    events, jurisdiction_filter = service.checked_subscription(
        principal, ctx.directory, body.events, body.jurisdiction_filter
    )
    assert events is not None
    checked_url = await service.valid_url(
        body.url, allow_loopback_http=ctx.settings.allow_loopback_webhooks, resolver=None
    )
    async with ctx.transaction() as session:
        created = await service.register(
            session,
            principal,
            checked_url=checked_url,
            events=events,
            jurisdiction_filter=jurisdiction_filter,
            now=ctx.clock.now(),
        )
    answer = WebhookCreated.model_validate(created)
    response.headers["Location"] = f"/api/v1/webhooks/{answer.webhook_id}"
    return answer


@router.get(
    "/webhooks",
    response_model=WebhookList,
    summary="The key's webhooks (without secrets)",
    responses=problem_responses(401, 403),
)
async def list_webhooks(principal: AuthenticatedFree, ctx: Ctx) -> WebhookList:
    async with ctx.sessionmaker() as session:
        listing = await service.list_webhooks(session, principal)
    return WebhookList.model_validate(listing)


@router.patch(
    "/webhooks/{webhook_id}",
    response_model=WebhookOut,
    summary="Change a webhook (every field optional; a new url is validated again)",
    description="Answers the webhook as GET /webhooks lists it.",
    responses=problem_responses(400, 401, 403, 404, 409),
)
async def update_webhook(
    webhook_id: WebhookId, body: WebhookUpdate, principal: AuthenticatedFree, ctx: Ctx
) -> WebhookOut:
    changes = body.model_dump(exclude_unset=True)
    service.checked_subscription(
        principal, ctx.directory, changes.get("events"), changes.get("jurisdiction_filter")
    )
    checked_url = None
    if changes.get("url") is not None:
        checked_url = await service.valid_url(
            changes["url"], allow_loopback_http=ctx.settings.allow_loopback_webhooks, resolver=None
        )
    async with ctx.transaction() as session:
        updated = await service.update(
            session,
            principal,
            webhook_id,
            changes,
            checked_url=checked_url,
            directory=ctx.directory,
            now=ctx.clock.now(),
        )
    return WebhookOut.model_validate(updated)


@router.delete(
    "/webhooks/{webhook_id}",
    response_model=WebhookDeleted,
    summary="Deactivate and remove a webhook (only the registering key)",
    responses=problem_responses(401, 403, 404),
)
async def delete_webhook(
    webhook_id: WebhookId, principal: AuthenticatedFree, ctx: Ctx
) -> WebhookDeleted:
    async with ctx.transaction() as session:
        deleted = await service.delete(session, principal, webhook_id, ctx.clock.now())
    return WebhookDeleted.model_validate(deleted)


@router.get(
    "/webhooks/{webhook_id}/deliveries",
    response_model=DeliveryList,
    summary="Delivery history, newest first (kept 30 days)",
    responses=problem_responses(400, 401, 403, 404),
)
async def list_deliveries(
    webhook_id: WebhookId,
    principal: AuthenticatedFree,
    ctx: Ctx,
    limit: Annotated[PlainInt, Query(ge=1, le=100)] = 20,
) -> DeliveryList:
    async with ctx.sessionmaker() as session:
        listing = await service.deliveries(session, principal, webhook_id, limit)
    return DeliveryList.model_validate(listing)


@idempotent_post(
    router,
    "/webhooks/{webhook_id}/deliveries/{delivery_id}/replay",
    status_code=202,
    response_model=ReplayAccepted,
    summary="Send a delivered or dead delivery again (new delivery_id, same event)",
    description="The replay keeps the event_id and timestamp, gets a new delivery_id, and is "
    "sent with the webhook's current URL and secret by the worker at once. 409 "
    "delivery_pending while the original is still being retried; 409 webhook_inactive when "
    "the webhook is inactive. Adds no event to the feed.",
    responses=problem_responses(401, 403, 404, 409),
)
async def replay_delivery(
    webhook_id: WebhookId,
    delivery_id: DeliveryId,
    principal: AuthenticatedFree,
    ctx: Ctx,
    response: Response,
) -> ReplayAccepted:
    async with ctx.transaction() as session:
        accepted = await service.replay(
            session, principal, webhook_id, delivery_id, ctx.clock.now()
        )
    # Where the new delivery is listed with its outcome.
    response.headers["Location"] = f"/api/v1/webhooks/{webhook_id}/deliveries"
    return ReplayAccepted.model_validate(accepted)


@router.post(
    "/webhooks/{webhook_id}/rotate-secret",
    response_model=SecretRotated,
    summary="A new signing secret; the previous one keeps signing for 24 hours",
    responses=problem_responses(401, 403, 404, 409),
)
async def rotate_secret(
    webhook_id: WebhookId, principal: AuthenticatedFree, ctx: Ctx
) -> SecretRotated:
    async with ctx.transaction() as session:
        rotated = await service.rotate_secret(session, principal, webhook_id, ctx.clock.now())
    return SecretRotated.model_validate(rotated)


@router.post(
    "/webhooks/{webhook_id}/test",
    response_model=TestResult,
    summary="Send a synthetic `test` event now (never retried, not counted)",
    responses=problem_responses(401, 403, 404, 409, 429),
)
async def test_webhook(webhook_id: WebhookId, principal: Authenticated, ctx: Ctx) -> TestResult:
    return TestResult.model_validate(await probe.ping(ctx, principal, webhook_id))


@router.post(
    "/webhooks/{webhook_id}/simulate",
    response_model=SimulateResult,
    summary="Send a full canonical delivery of an event now, with X-Service-Test: true",
    description="Body optional: `{event}` (default status_change). The request is exactly a "
    "live delivery's (signatures, envelope, realistic data) plus the header "
    "`X-Service-Test: true`; it is not stored, retried or counted. A transport failure is "
    "`status_code` 0 with `error`, and `ok` stays true.",
    responses=problem_responses(400, 401, 403, 404, 409, 429),
)
async def simulate_webhook(
    webhook_id: WebhookId,
    principal: Authenticated,
    ctx: Ctx,
    body: Annotated[SimulateBody | None, Body()] = None,
) -> SimulateResult:
    event = (body or SimulateBody()).event
    return SimulateResult.model_validate(await probe.simulate(ctx, principal, webhook_id, event))
