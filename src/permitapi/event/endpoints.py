"""GET /api/v1/events: the key's events feed. Costs no credits and is not throttled."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query

from permitapi.event import feed
from permitapi.event.schemas import EventFeed
from permitapi.usage.auth_dependencies import AuthenticatedFree, Ctx
from permitapi.web.openapi import problem_responses
from permitapi.web.plain_int import PlainInt

router = APIRouter(tags=["events"])


@router.get(
    "/events",
    response_model=EventFeed,
    summary="The key's canonical events, oldest first by ingestion order",
    description="Permit events of the permits the key monitors, `operation_completed` of its "
    "operations and `criteria_match` of its saved searches, kept 30 days. Continue with "
    "`next_cursor` as `cursor`; a cursor of another key, a tampered one or one whose event has "
    "expired is 400 invalid_cursor. Replayed deliveries add no events.",
    responses=problem_responses(400, 401, 403),
)
async def events_feed(
    principal: AuthenticatedFree,
    ctx: Ctx,
    cursor: Annotated[
        str | None, Query(min_length=1, max_length=4096, description="A previous next_cursor")
    ] = None,
    limit: Annotated[PlainInt, Query(ge=1, le=feed.MAX_LIMIT)] = feed.DEFAULT_LIMIT,
) -> EventFeed:
    async with ctx.sessionmaker() as session:
        body = await feed.page(
            session,
            principal,
            ctx.directory,
            secret=ctx.settings.secret_key.get_secret_value(),
            cursor=cursor,
            limit=limit,
            now=ctx.clock.now(),
        )
    return EventFeed.model_validate(body)
