"""One saved search's daily evaluation (spec, States: Saved search).

- The first successful evaluation reads the newest page (up to 100 permits) and stores those
  identities (jurisdiction, permit_number) as a silent baseline: no events.
- Later evaluations read newest first, page after page while a page holds nothing the search
  has seen (the new permits reach deeper than one page), at most MAX_PAGES; every identity
  never seen before is recorded and emits one `criteria_match` to the owner, in the
  transaction that records it.
- Any incomplete read (a source failed or was cut short, an empty result that cannot be
  verified, an unexpected error) records the error and emits nothing; the next daily run
  tries again.
- The outcome is written only while the search is still active and still has the criteria it
  was read with (`generation`): new criteria cleared the identities, and a read of the old
  ones must not become the new baseline.

Sources are read below the metering layer (`discovery.search.run_page`): evaluations cost no
lookup or discovery credits.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, Final, Literal

from sqlalchemy.ext.asyncio import AsyncSession

from permitapi.context import AppContext
from permitapi.discovery.cursor import Position
from permitapi.discovery.filters import SearchQuery
from permitapi.discovery.hits import hit_data
from permitapi.discovery.search import PageOutcome, run_page
from permitapi.errors import ApiError
from permitapi.event import service as events
from permitapi.kit.clock import isoformat_z
from permitapi.saved_search import repository
from permitapi.saved_search.criteria import parse_criteria
from permitapi.saved_search.models import SavedSearch
from permitapi.saved_search.repository import Identity
from permitapi.sources.base import SearchHit

log = logging.getLogger("permitapi.saved_search")

MAX_PAGES: Final = 5
# Identities no evaluation has read for this long are forgotten (the spec's 90-day window for
# stored discovery criteria): by then they are far below the pages an evaluation reads.
IDENTITY_RETENTION: Final = timedelta(days=90)
ERROR_MESSAGE_MAX: Final = 500

Outcome = Literal["baseline", "evaluated", "failed", "skipped"]


class IncompleteRead(Exception):
    """A discovery page that cannot be trusted as the whole truth."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


def identity(hit: SearchHit) -> Identity:
    return (hit.jurisdiction, hit.permit_number)


def unique_hits(hits: Sequence[SearchHit]) -> list[SearchHit]:
    """First occurrence of each identity (pages of live sources may repeat a permit)."""
    seen: set[Identity] = set()
    kept = []
    for hit in hits:
        if identity(hit) not in seen:
            seen.add(identity(hit))
            kept.append(hit)
    return kept


async def checked_page(
    ctx: AppContext,
    query: SearchQuery,
    position: Position,
    *,
    first_page: bool,
    sleep: Callable[[float], Awaitable[None]] | None = None,
) -> PageOutcome:
    """One discovery page, or IncompleteRead when any source read was incomplete or the empty
    result could not be verified (503 source_inconclusive / source_lagging on the API)."""
    outcome = await run_page(
        ctx.gateway,
        ctx.directory,
        query,
        position,
        now=ctx.clock.now(),
        first_page=first_page,
        sleep=sleep or asyncio.sleep,
    )
    if outcome.verdict is not None:
        reasons = [w["message"] for w in outcome.warnings if w["code"] != "source_notice"]
        raise IncompleteRead(
            outcome.verdict,
            "No permits found, and the empty result could not be verified. " + " ".join(reasons),
        )
    if outcome.partial:
        problems = [
            w for w in outcome.warnings if w["code"] in ("source_unavailable", "source_incomplete")
        ]
        code = problems[0]["code"] if problems else "source_incomplete"
        raise IncompleteRead(code, " ".join(w["message"] for w in problems) or "partial read")
    return outcome


@dataclass(frozen=True, slots=True)
class EvaluationResult:
    saved_search_id: str
    outcome: Outcome
    new: int = 0  # identities recorded (the baseline's, or new matches)
    emitted: int = 0
    error: str | None = None


async def _read(
    ctx: AppContext,
    query: SearchQuery,
    known: set[Identity],
    *,
    baseline: bool,
    sleep: Callable[[float], Awaitable[None]] | None,
) -> list[SearchHit]:
    hits: list[SearchHit] = []
    position = Position.start(query.sources)
    for page_number in range(1 if baseline else MAX_PAGES):
        outcome = await checked_page(ctx, query, position, first_page=page_number == 0, sleep=sleep)
        hits.extend(outcome.hits)
        reached_known = any(identity(hit) in known for hit in outcome.hits)
        if outcome.next_position is None or reached_known:
            break
        position = outcome.next_position
    return unique_hits(hits)


async def evaluate(
    ctx: AppContext,
    search: SavedSearch,
    *,
    sleep: Callable[[float], Awaitable[None]] | None = None,
) -> EvaluationResult:
    """Evaluate one active search now. Never raises for a source or criteria failure (it is
    recorded on the search); database errors propagate."""
    search_id, generation = search.saved_search_id, search.generation
    baseline = search.baseline_taken_at is None
    try:
        query = parse_criteria(search.criteria)
        async with ctx.sessionmaker() as session:
            known = await repository.identities_of(session, search_id)
        hits = await _read(ctx, query, known, baseline=baseline, sleep=sleep)
    except IncompleteRead as failure:
        return await _record_failure(ctx, search_id, generation, failure.code, failure.message)
    except ApiError as refused:  # criteria the current rules no longer accept
        return await _record_failure(ctx, search_id, generation, refused.code, refused.detail)
    except Exception:
        log.exception("saved search %s: evaluation failed unexpectedly", search_id)
        return await _record_failure(
            ctx, search_id, generation, "internal_error", "The evaluation failed unexpectedly."
        )
    return await _record_success(ctx, search_id, generation, hits)


async def _current(session: AsyncSession, search_id: str, generation: int) -> SavedSearch | None:
    """The search, locked, if an outcome read under `generation` may still be written."""
    current = await repository.locked_search(session, search_id)
    if current is None or current.status != "active" or current.generation != generation:
        return None
    return current


async def _record_failure(
    ctx: AppContext, search_id: str, generation: int, code: str, message: str
) -> EvaluationResult:
    now = ctx.clock.now()
    async with ctx.transaction() as session:
        if await _current(session, search_id, generation) is None:
            return EvaluationResult(search_id, "skipped")
        await repository.update_search(
            session,
            search_id,
            {
                "last_evaluated_at": now,
                "last_error_code": code[:64],
                "last_error_message": message[:ERROR_MESSAGE_MAX],
            },
        )
    log.info("saved search %s: evaluation failed (%s): %s", search_id, code, message)
    return EvaluationResult(search_id, "failed", error=code)


async def _record_success(
    ctx: AppContext, search_id: str, generation: int, hits: list[SearchHit]
) -> EvaluationResult:
    now = ctx.clock.now()
    async with ctx.transaction() as session:
        current = await _current(session, search_id, generation)
        if current is None:
            return EvaluationResult(search_id, "skipped")
        known = await repository.identities_of(session, search_id)
        new = [hit for hit in hits if identity(hit) not in known]
        seen_again = [identity(hit) for hit in hits if identity(hit) in known]
        await repository.insert_identities(session, search_id, map(identity, new), now)
        await repository.touch_identities(session, search_id, seen_again, now)
        await repository.forget_unseen(session, search_id, now - IDENTITY_RETENTION)
        values: dict[str, Any] = {
            "last_evaluated_at": now,
            "last_success_at": now,
            "last_error_code": None,
            "last_error_message": None,
        }
        baseline = current.baseline_taken_at is None
        if baseline:
            values["baseline_taken_at"] = now
        else:
            # Oldest first, so the owner's feed reads in the order the permits were issued.
            for hit in reversed(new):
                await _emit_match(session, current, hit, now)
            if new:
                values["last_match_at"] = now
        await repository.update_search(session, search_id, values)
    return EvaluationResult(
        search_id,
        "baseline" if baseline else "evaluated",
        new=len(new),
        emitted=0 if baseline else len(new),
    )


async def _emit_match(
    session: AsyncSession, search: SavedSearch, hit: SearchHit, now: datetime
) -> None:
    await events.emit(
        session,
        events.CRITERIA_MATCH,
        data={
            "saved_search_id": search.saved_search_id,
            "name": search.name,
            "criteria": search.criteria,
            "match": hit_data(hit),
            "matched_at": isoformat_z(now),
        },
        occurred_at=now,
        recipients=[search.api_key_id],
        api_key_id=search.api_key_id,
        permit_number=hit.permit_number,
        jurisdiction=hit.jurisdiction,
    )
