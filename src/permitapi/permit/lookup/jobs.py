"""The worker's operation job source (it lives with lookup: finishing an operation runs a
lookup's refresh): claims due operations and runs their refreshes.

Claiming moves pending rows (and running rows whose lease expired: their worker died) to
running under this worker's lease. The refresh goes through the same single-flight path as
synchronous lookups; completion is conditional on still holding the lease, so an operation
completes, settles its credits and emits `operation_completed` exactly once.
"""

from __future__ import annotations

import asyncio
import logging
from datetime import timedelta
from typing import Any

from permitapi.account import repository as accounts
from permitapi.account.plans import plan_named
from permitapi.context import AppContext
from permitapi.errors import problem_body
from permitapi.kit.clock import isoformat_z
from permitapi.kit.ids import new_owner_id
from permitapi.permit import repository as permits
from permitapi.permit.lookup import status_record
from permitapi.permit.lookup.refresh import RefreshOutcome, refresh
from permitapi.permit.lookup.service import Target, permit_not_found, unavailable
from permitapi.permit.operation import repository, service
from permitapi.permit.operation.models import Operation
from permitapi.worker import progress

log = logging.getLogger("permitapi.permit.lookup.jobs")

CLAIM_BATCH = 4
MAX_ATTEMPTS = 3  # a job that killed its worker this often is failed instead of retried


class OperationJobs:
    name = "operations"

    def __init__(self) -> None:
        self.owner = new_owner_id()

    def lease(self, ctx: AppContext) -> timedelta:
        return timedelta(seconds=ctx.settings.operation_lease_seconds)

    async def run_due(self, ctx: AppContext) -> int:
        now = ctx.clock.now()
        async with ctx.transaction() as session:
            claimed = await repository.claim_due(
                session, self.owner, now, now + self.lease(ctx), CLAIM_BATCH
            )
        if claimed:
            progress.expect(len(claimed))
            await asyncio.gather(*(self._run_one(ctx, op_id) for op_id in claimed))
        return len(claimed)

    async def _run_one(self, ctx: AppContext, operation_id: str) -> None:
        try:
            async with ctx.sessionmaker() as session:
                operation = await repository.get(session, operation_id)
            assert operation is not None
            result, error = await self._execute(ctx, operation)
        except Exception:
            log.exception("operation %s failed unexpectedly", operation_id)
            result = None
            error = {"code": "internal_error", "message": "unexpected failure", "retryable": True}
        async with ctx.transaction() as session:
            done = await service.finish(
                session, operation_id, self.owner, result=result, error=error, now=ctx.clock.now()
            )
        if not done:
            log.warning("operation %s: lease lost; another worker completes it", operation_id)
        progress.advance()

    async def _execute(
        self, ctx: AppContext, operation: Operation
    ) -> tuple[dict[str, Any] | None, dict[str, Any] | None]:
        jurisdiction = ctx.directory.get(operation.jurisdiction)
        if jurisdiction is None:
            return None, {"code": "invalid_jurisdiction", "message": "unknown", "retryable": False}
        if operation.attempts > MAX_ATTEMPTS:
            return None, {
                "code": "operation_abandoned",
                "message": f"The refresh was interrupted {MAX_ATTEMPTS} times.",
                "retryable": True,
            }
        target = Target(jurisdiction, operation.permit_number)
        async with ctx.sessionmaker() as session:
            row = await permits.read_cached(session, jurisdiction.slug, target.number)
        fresh = (
            row is not None and row.has_snapshot and status_record.is_fresh(row, ctx.clock.now())
        )
        outcome = (
            RefreshOutcome("fetched")
            if fresh and not operation.force_refresh
            else await refresh(ctx, jurisdiction, target.number)
        )
        if outcome.kind == "not_found":
            problem = permit_not_found(target)
            body = problem_body(
                status=problem.status,
                code=problem.code,
                title=problem.title,
                detail=problem.detail,
                instance=f"/api/v1/permits/{target.number}/status",
                request_id=operation.operation_id,
                extra=problem.extra,
            )
            return body, None
        if outcome.kind == "failed":
            failure = unavailable(target, outcome)
            return None, {
                "code": failure.code,
                "message": failure.detail,
                "retryable": True,
                "reason": outcome.reason,
            }
        async with ctx.sessionmaker() as session:
            row = await permits.read_cached(session, jurisdiction.slug, target.number)
            plan = await accounts.plan_of_key(session, operation.api_key_id)
        assert row is not None
        assert row.has_snapshot
        now = ctx.clock.now()
        source: status_record.Source = (
            "cached" if fresh and not operation.force_refresh else "live_scrape"
        )
        record = status_record.status_record(
            row,
            ctx.directory,
            source=source,
            now=now,
            refresh_available=bool(plan and plan_named(plan).force_refresh),
        )
        log.debug("operation %s done at %s", operation.operation_id, isoformat_z(now))
        return record, None
