"""The delivery engine (job source `deliveries`): the worker attempts due webhook deliveries.

A pass leases up to CONCURRENCY webhooks that have due deliveries (the lease is on the webhook,
so each has at most one attempt in flight, across every worker) and drains each one's due
deliveries in order, concurrently across webhooks: one slow receiver never blocks another.
Outcomes are written when a webhook's drain ends, conditionally on still holding its lease; a
worker killed mid-drain wrote nothing, its lease lapses and another worker sends those
deliveries again (at-least-once, same delivery_id, which receivers dedupe on).

A drain stops at the first failure (the receiver is likely down: the next due delivery would
fail the same way) and when half the lease has been used, so a lease never lapses under a live
worker.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any, Final

import httpx
from sqlalchemy.ext.asyncio import AsyncSession

from permitapi.account.plans import EVENTS_RETENTION
from permitapi.context import AppContext
from permitapi.event import repository as events
from permitapi.kit.ids import new_owner_id
from permitapi.telemetry.metrics import DELIVERY_OUTCOMES
from permitapi.webhook import attempt, repository, schedule
from permitapi.webhook.destination import Resolver
from permitapi.webhook.models import Webhook, WebhookDelivery
from permitapi.webhook.signed_headers import signed_request
from permitapi.worker import progress
from permitapi.worker.purge import Purge

log = logging.getLogger("permitapi.webhook.engine")

CONCURRENCY: Final = 32
DRAIN_BATCH: Final = 100
# A delivery that dies while every attempt since its first has failed (the receiver has not
# acknowledged anything for about two days) disables its webhook: consecutive_failures is at
# least this many then.
DISABLE_AFTER_CONSECUTIVE_FAILURES: Final = schedule.MAX_ATTEMPTS


def _lease(ctx: AppContext) -> timedelta:
    return timedelta(seconds=ctx.settings.delivery_lease_seconds)


@dataclass
class DrainOutcome:
    updates: list[dict[str, Any]] = field(default_factory=list)
    webhook_values: dict[str, Any] = field(default_factory=dict)
    disable_reason: str | None = None
    attempted: int = 0


class DeliveryJobs:
    """Job source `deliveries`; `permitapi jobs run deliveries` runs one pass of it."""

    name = "deliveries"

    def __init__(self, resolver: Resolver | None = None) -> None:
        self.owner = new_owner_id()
        self._resolver = resolver
        self._client: httpx.AsyncClient | None = None

    def poll_interval(self, ctx: AppContext) -> float:
        return ctx.settings.delivery_poll_interval_seconds

    @property
    def client(self) -> httpx.AsyncClient:
        if self._client is None:
            self._client = attempt.new_client()
        return self._client

    async def aclose(self) -> None:
        if self._client is not None:
            await self._client.aclose()
            self._client = None

    async def run_due(self, ctx: AppContext) -> int:
        now = ctx.clock.now()
        async with ctx.transaction() as session:
            claimed = await repository.claim_webhooks(
                session, self.owner, now, now + _lease(ctx), CONCURRENCY
            )
        if not claimed:
            return 0
        counts = await asyncio.gather(*(self._drain(ctx, webhook_id) for webhook_id in claimed))
        return sum(counts)

    async def _drain(self, ctx: AppContext, webhook_id: str) -> int:
        try:
            async with ctx.sessionmaker() as session:
                webhook = await repository.webhook_by_id(session, webhook_id)
                due = await repository.due_deliveries(
                    session, webhook_id, ctx.clock.now(), DRAIN_BATCH
                )
            if webhook is None or not webhook.is_active:
                return 0
            outcome = await self._attempt_in_order(ctx, webhook, due)
            async with ctx.transaction() as session:
                # A worker whose lease lapsed records nothing: the new holder's attempts count.
                if await repository.holds_lease(session, webhook_id, self.owner):
                    await repository.record_attempts(session, outcome.updates)
                    if outcome.webhook_values:
                        await repository.update_webhook(session, webhook_id, outcome.webhook_values)
                    if outcome.disable_reason is not None:
                        await repository.kill_pending(
                            session, webhook_id, f"webhook disabled ({outcome.disable_reason})"
                        )
                    await repository.release_webhook(session, webhook_id, self.owner)
            progress.advance(outcome.attempted)
            return outcome.attempted
        except Exception:
            log.exception("delivery drain of webhook %s failed; its lease lapses", webhook_id)
            return 0

    async def _attempt_in_order(
        self, ctx: AppContext, webhook: Webhook, due: list[WebhookDelivery]
    ) -> DrainOutcome:
        outcome = DrainOutcome()
        started = ctx.clock.now()
        failures = webhook.consecutive_failures
        for delivery in due:
            now = ctx.clock.now()
            if now - started > _lease(ctx) / 2:
                break
            body = delivery.payload.encode()
            headers = signed_request(webhook, delivery.delivery_id, delivery.event_type, body, now)
            result = await attempt.send(
                self.client,
                webhook.url,
                headers,
                body,
                allow_loopback_http=ctx.settings.allow_loopback_webhooks,
                resolver=self._resolver,
            )
            outcome.attempted += 1
            attempts = delivery.attempts + 1
            values: dict[str, Any] = {
                "delivery_id": delivery.delivery_id,
                "attempts": attempts,
                "last_attempt_at": now,
                "last_status_code": result.status_code,
                "last_error": result.error,
            }
            outcome.webhook_values["last_triggered_at"] = now
            if result.acknowledged:
                failures = 0
                values.update(status="delivered", next_attempt_at=None)
                outcome.updates.append(values)
                DELIVERY_OUTCOMES.labels("delivered").inc()
                continue
            failures += 1
            if result.refused:
                DELIVERY_OUTCOMES.labels("refused").inc()
            if result.gone:
                values.update(status="dead", next_attempt_at=None)
                outcome.disable_reason = "gone"
                DELIVERY_OUTCOMES.labels("disabled").inc()
            else:
                due_at = schedule.next_attempt_at(
                    created_at=delivery.created_at,
                    failed_attempts=attempts,
                    now=now,
                    retry_after_seconds=result.retry_after_seconds,
                )
                values.update(
                    status="pending" if due_at is not None else "dead", next_attempt_at=due_at
                )
                DELIVERY_OUTCOMES.labels("retry" if due_at is not None else "dead").inc()
                if due_at is None and failures >= DISABLE_AFTER_CONSECUTIVE_FAILURES:
                    outcome.disable_reason = "failures"
            outcome.updates.append(values)
            break
        outcome.webhook_values["consecutive_failures"] = failures
        if outcome.disable_reason is not None:
            outcome.webhook_values.update(
                is_active=False, disabled_reason=outcome.disable_reason, updated_at=ctx.clock.now()
            )
        if outcome.attempted == 0:
            outcome.webhook_values.clear()
        return outcome


class MonitoringRetention(Purge):
    """Worker job `retention`: events, events-feed entries and webhook delivery history are
    kept 30 days (EVENTS_RETENTION), then deleted, at most once per `interval` per worker."""

    name = "retention"

    async def purge(self, session: AsyncSession, now: datetime) -> int:
        cutoff = now - EVENTS_RETENTION
        purged = await events.purge_before(session, cutoff)
        purged += await repository.purge_deliveries_before(session, cutoff)
        return purged
