"""The OutcomeRecorder the SourceGateway uses: one short transaction per outcome (per batch for
a batch's outcomes), never raises.

Recording happens after the portal call returned, so no connection is held across the fetch
(design.md, hot path), and a database hiccup never turns a good fetch into an error.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from permitapi.kit.clock import Clock
from permitapi.source_health import service

log = logging.getLogger(__name__)


class DatabaseOutcomeRecorder:
    def __init__(self, sessionmaker: async_sessionmaker[AsyncSession], clock: Clock) -> None:
        self._sessionmaker = sessionmaker
        self._clock = clock

    async def record(
        self,
        source: str,
        operation: str,
        outcome: str,
        reason: str | None,
        latency_ms: float | None,
    ) -> None:
        await self._append(
            source,
            operation,
            [(outcome, reason, latency_ms)],
            f"source outcome {source} {operation} {outcome}",
        )

    async def record_many(
        self,
        source: str,
        operation: str,
        outcomes: Sequence[tuple[str, str | None, float | None]],
    ) -> None:
        await self._append(
            source, operation, outcomes, f"{len(outcomes)} source outcomes of {source}"
        )

    async def _append(
        self,
        source: str,
        operation: str,
        outcomes: Sequence[tuple[str, str | None, float | None]],
        what: str,
    ) -> None:
        try:
            async with self._sessionmaker() as session, session.begin():
                await service.record_outcomes(
                    session,
                    source=source,
                    operation=operation,
                    outcomes=outcomes,
                    at=self._clock.now(),
                )
        except Exception:
            log.exception("could not record %s", what)
