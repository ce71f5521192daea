"""Worker job `saved-searches`: the daily evaluation of every active saved search.

Runs at most once a day across all workers (a `job_leases` lease, see worker.leases). The pass
evaluates each active search whose key may use saved searches now (an active live key of a
paid plan with the add-on), a few at a time; paused searches and those of keys that lost the
entitlement keep their state untouched. A failed evaluation is recorded on its search and
retried by the next daily pass. A worker that dies mid-pass loses the lease when it lapses and
another worker runs the pass again: searches already evaluated find nothing new (their
identities were recorded with their events), so nothing is emitted twice.
"""

from __future__ import annotations

import asyncio
import logging
from datetime import timedelta
from typing import Final

from permitapi.context import AppContext
from permitapi.saved_search import repository
from permitapi.saved_search.evaluation import EvaluationResult, evaluate
from permitapi.saved_search.models import SavedSearch
from permitapi.saved_search.service import entitled_plans
from permitapi.worker import progress
from permitapi.worker.daily_pass import DAILY, DailyPass

log = logging.getLogger("permitapi.saved_search.jobs")

NAME: Final = "saved-searches"
PERIOD: Final = DAILY
# Renewed after every batch; a batch of evaluations takes well under this.
LEASE: Final = timedelta(minutes=30)
CONCURRENCY: Final = 4  # evaluations at once: each reads both sources
IDLE_POLL_SECONDS: Final = 60.0


class SavedSearchEvaluations(DailyPass):
    """Job source `saved-searches`; `run_due` returns the number of searches evaluated."""

    name = NAME
    lease_length = LEASE
    idle_poll_seconds = IDLE_POLL_SECONDS

    async def run_pass(self, ctx: AppContext) -> int:
        async with ctx.sessionmaker() as session:
            searches = await repository.evaluable(session, entitled_plans())
        progress.expect(len(searches))
        results: list[EvaluationResult] = []
        for start in range(0, len(searches), CONCURRENCY):
            batch = searches[start : start + CONCURRENCY]
            results.extend(await asyncio.gather(*(self._one(ctx, s) for s in batch)))
            if not await self.lease.renew(ctx):
                log.warning("%s: lease lost; another worker runs the pass", NAME)
                return self._summary(results)
        async with ctx.transaction() as session:
            if not await self.lease.complete(session, ctx.clock.now()):
                log.warning("%s: lease lost before completion", NAME)
        return self._summary(results)

    async def _one(self, ctx: AppContext, search: SavedSearch) -> EvaluationResult:
        try:
            return await evaluate(ctx, search)
        except Exception:  # a database failure: the next daily pass evaluates it again
            log.exception("saved search %s: outcome not recorded", search.saved_search_id)
            return EvaluationResult(search.saved_search_id, "failed", error="internal_error")
        finally:
            progress.advance()

    @staticmethod
    def _summary(results: list[EvaluationResult]) -> int:
        checked = [r for r in results if r.outcome != "skipped"]
        log.info(
            "%s: checked=%d new=%d emitted=%d failed=%d",
            NAME,
            len(checked),
            sum(r.new for r in checked),
            sum(r.emitted for r in checked),
            sum(1 for r in checked if r.outcome == "failed"),
        )
        return len(checked)
