"""The daily drift canary pass (`sources-canary`): once a day, on one worker (PassLease), read the
canary's known public records through the process's gateway and store each jurisdiction's
verdict (ok | drift | unreached, with the fields named) for /developers/status.json.

A jurisdiction with several records gets the worst verdict (drift over unreached over ok) and
their details joined. A pass that fails is retried after `RETRY_AFTER_FAILURE`. The pass runs
only where the deployment turned it on (PERMITAPI_CANARY_DAILY=true; `jobs run
sources-canary` forces it): it reads real records from the real portals, which development and
test processes (on the simulator) have no business doing.
"""

from __future__ import annotations

from datetime import timedelta

from permitapi.context import AppContext
from permitapi.source_health import service
from permitapi.source_health.repository import CANARY_OPERATION
from permitapi.sources.canary.check import CanaryReport, RecordReport, load_records, run_canary
from permitapi.worker import progress
from permitapi.worker.daily_pass import DailyPass

PASS_NAME = "sources-canary"  # noqa: S105 - a job name, not a secret
LEASE = timedelta(minutes=30)
RETRY_AFTER_FAILURE = timedelta(minutes=30)
POLL_SECONDS = 60.0
_RANK = {"ok": 0, "unreached": 1, "drift": 2}


class CanaryPass(DailyPass):
    name = PASS_NAME
    lease_length = LEASE
    idle_poll_seconds = POLL_SECONDS

    def __init__(self, *, force: bool = False) -> None:
        super().__init__(force=force)
        self.last: CanaryReport | None = None

    def enabled(self, ctx: AppContext) -> bool:
        return ctx.settings.canary_daily

    async def run_pass(self, ctx: AppContext) -> int:
        records = load_records()
        progress.expect(len(records))
        try:
            report = await run_canary(ctx.gateway, ctx.directory, records)
        except Exception:
            await self.lease.postpone(ctx, ctx.clock.now() + RETRY_AFTER_FAILURE)
            raise
        now = ctx.clock.now()
        async with ctx.transaction() as session:
            for slug, verdict in verdicts(report).items():
                await service.record_outcomes(
                    session, source=slug, operation=CANARY_OPERATION, outcomes=[verdict], at=now
                )
            await self.lease.complete(session, now)
        self.last = report
        progress.advance(len(report.records))
        return len(report.records)


def verdicts(report: CanaryReport) -> dict[str, tuple[str, str | None, float | None]]:
    """Per jurisdiction: (outcome, detail, latency_ms) of its worst record."""
    grouped: dict[str, list[RecordReport]] = {}
    for record in report.records:
        grouped.setdefault(record.jurisdiction, []).append(record)
    found: dict[str, tuple[str, str | None, float | None]] = {}
    for slug, records in grouped.items():
        worst = max(records, key=lambda r: _RANK[r.outcome])
        details = [_detail(r) for r in records if r.outcome != "ok"]
        found[slug] = (worst.outcome, "; ".join(details)[:200] or None, worst.latency_ms)
    return found


def _detail(record: RecordReport) -> str:
    parts = [record.permit_number]
    if record.missing:
        parts.append("missing " + ", ".join(record.missing))
    if record.changed:
        parts.append("changed " + "; ".join(record.changed))
    if record.error:
        parts.append(record.error)
    return ": ".join(parts[:1]) + " " + " | ".join(parts[1:])
