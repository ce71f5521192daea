"""Source health rules: record fetch outcomes and judge each jurisdiction's portal.

Status of a jurisdiction (decisions.md, "Sources"):
- `down`: the circuit breaker is open, or the last `DOWN_AFTER_FAILURES` (3) recorded outcomes
  all failed (no success since).
- `degraded`: the latest outcome failed (1-2 in a row), the circuit is half-open, or the source
  flaps: at least `FLAPPING_MIN_SAMPLES` outcomes in the window with an error rate of
  `FLAPPING_ERROR_RATE` or more even though the latest succeeded.
- `operational`: otherwise, including a source not fetched yet.
The error rate is over the last `WINDOW` (15 minutes). A failure is any outcome other than
`success` and `not_found` (a confirmed "no such permit" is the portal working).
Services call these with a session and never commit; `DatabaseOutcomeRecorder` owns its own
short transaction.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

from sqlalchemy.ext.asyncio import AsyncSession

from permitapi.source_health import repository
from permitapi.sources.circuit import CircuitSnapshot, CircuitState
from permitapi.sources.registry import Directory

WINDOW = timedelta(minutes=15)
DOWN_AFTER_FAILURES = 3
FLAPPING_MIN_SAMPLES = 20
FLAPPING_ERROR_RATE = 0.5


@dataclass(frozen=True, slots=True)
class SourceHealth:
    slug: str
    display_name: str
    platform: str
    status: str  # operational | degraded | down
    last_success_at: datetime | None
    last_failure_at: datetime | None
    last_failure_reason: str | None
    error_rate: float | None  # None: no outcome in the window
    sample_size: int
    consecutive_failures: int
    circuit_state: str
    canary: repository.CanaryRow | None = None  # the daily drift canary's latest verdict


async def record_outcomes(
    session: AsyncSession,
    *,
    source: str,
    operation: str,
    outcomes: Sequence[tuple[str, str | None, float | None]],
    at: datetime,
) -> None:
    """Append many (outcome, reason, latency_ms) of one source at once (a batch's fetches), in
    the given order. Side effect: one INSERT; the caller commits."""
    await repository.insert_fetches(session, source, operation, outcomes, at)


def judge(aggregate: repository.SourceAggregate | None, circuit: CircuitState) -> str:
    if circuit is CircuitState.OPEN:
        return "down"
    if aggregate is None:
        return "degraded" if circuit is CircuitState.HALF_OPEN else "operational"
    if aggregate.failures_since_success >= DOWN_AFTER_FAILURES:
        return "down"
    if aggregate.failures_since_success > 0 or circuit is CircuitState.HALF_OPEN:
        return "degraded"
    total = aggregate.window_total
    if total >= FLAPPING_MIN_SAMPLES and aggregate.window_failures / total >= FLAPPING_ERROR_RATE:
        return "degraded"
    return "operational"


async def health_report(
    session: AsyncSession,
    directory: Directory,
    *,
    now: datetime,
    circuit_of: Callable[[str], Awaitable[CircuitSnapshot]] | None = None,
) -> list[SourceHealth]:
    """Health of every jurisdiction in the directory, in directory order."""
    aggregates = await repository.aggregates(session, now - WINDOW)
    canaries = await repository.latest_canaries(session)
    report = []
    for item in directory:
        aggregate = aggregates.get(item.slug)
        circuit = (await circuit_of(item.slug)).state if circuit_of else CircuitState.CLOSED
        total = aggregate.window_total if aggregate else 0
        report.append(
            SourceHealth(
                slug=item.slug,
                display_name=item.display_name,
                platform=item.platform,
                status=judge(aggregate, circuit),
                last_success_at=aggregate.last_success_at if aggregate else None,
                last_failure_at=aggregate.last_failure_at if aggregate else None,
                last_failure_reason=aggregate.last_failure_reason if aggregate else None,
                error_rate=round(aggregate.window_failures / total, 4)
                if aggregate and total
                else None,
                sample_size=total,
                consecutive_failures=aggregate.failures_since_success if aggregate else 0,
                circuit_state=circuit.value,
                canary=canaries.get(item.slug),
            )
        )
    return report
