"""Saved-search endpoints: stored discovery criteria evaluated once a day. Free of credits and
of the per-minute burst window (nothing here reads a portal)."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Path, Response

from permitapi.account.plans import Meter
from permitapi.idempotency.route import idempotent_post
from permitapi.saved_search import service
from permitapi.saved_search.schemas import (
    SavedSearchCreate,
    SavedSearchDeleted,
    SavedSearchList,
    SavedSearchOut,
    SavedSearchUpdate,
)
from permitapi.usage.auth_dependencies import AuthenticatedFree, Ctx, use_meter
from permitapi.web.openapi import problem_responses

router = APIRouter(tags=["saved searches"], dependencies=[use_meter(Meter.DISCOVERY)])

SavedSearchId = Annotated[str, Path(max_length=64, description="A saved_search_id")]

_RULES = (
    "Needs a live key of a paid plan with the Permit Discovery add-on (403 "
    "saved_search_not_available with upgrade_hint; sandbox keys 403 sandbox_not_supported). "
    "Criteria are GET /permits/search's filters and get its 400 codes (filter_required, "
    "unsupported_filter, invalid_<filter>, ...), naming `criteria.<filter>`. Active saved "
    "searches per key: developer 3, pro 10, enterprise 50 (400 saved_search_limit_reached). "
    "No credits are consumed, now or by the daily evaluations."
)


@idempotent_post(
    router,
    "/saved-searches",
    status_code=201,
    response_model=SavedSearchOut,
    summary="Save a discovery search; new matches become criteria_match events",
    description="The next daily evaluation records the newest matches (up to 100) as a silent "
    "baseline; every later evaluation emits one criteria_match event to this key (feed and "
    "subscribed webhooks) per permit it has not seen before. " + _RULES,
    responses=problem_responses(400, 401, 403),
)
async def create_saved_search(
    body: SavedSearchCreate, principal: AuthenticatedFree, ctx: Ctx, response: Response
) -> SavedSearchOut:
    name, _ = service.checked_definition(principal, body.name, body.criteria)
    assert name is not None
    async with ctx.transaction() as session:
        created = await service.create(
            session, principal, name=name, criteria=body.criteria, now=ctx.clock.now()
        )
    answer = SavedSearchOut.model_validate(created)
    response.headers["Location"] = f"/api/v1/saved-searches/{answer.saved_search_id}"
    return answer


@router.get(
    "/saved-searches",
    response_model=SavedSearchList,
    summary="The key's saved searches, with their evaluation state",
    description="Works without the add-on too, so a key that lost it still sees its searches.",
    responses=problem_responses(401, 403),
)
async def list_saved_searches(principal: AuthenticatedFree, ctx: Ctx) -> SavedSearchList:
    async with ctx.sessionmaker() as session:
        listing = await service.list_searches(session, principal)
    return SavedSearchList.model_validate(listing)


@router.get(
    "/saved-searches/{saved_search_id}",
    response_model=SavedSearchOut,
    summary="One saved search: its definition and evaluation state",
    responses=problem_responses(401, 403, 404),
)
async def get_saved_search(
    saved_search_id: SavedSearchId, principal: AuthenticatedFree, ctx: Ctx
) -> SavedSearchOut:
    async with ctx.sessionmaker() as session:
        found = await service.get(session, principal, saved_search_id)
    return SavedSearchOut.model_validate(found)


@router.patch(
    "/saved-searches/{saved_search_id}",
    response_model=SavedSearchOut,
    summary="Pause, resume, rename or replace the criteria of a saved search",
    description="Every field optional. `status: paused` stops evaluations and keeps the "
    "baseline (a permit first seen while paused is new after resuming); `status: active` "
    "resumes. Criteria selecting other permits clear the seen identities: the next "
    "successful evaluation is a fresh baseline. " + _RULES,
    responses=problem_responses(400, 401, 403, 404),
)
async def update_saved_search(
    saved_search_id: SavedSearchId, body: SavedSearchUpdate, principal: AuthenticatedFree, ctx: Ctx
) -> SavedSearchOut:
    name, query = service.checked_definition(principal, body.name, body.criteria)
    async with ctx.transaction() as session:
        updated = await service.update(
            session,
            principal,
            saved_search_id,
            name=name,
            criteria=body.criteria,
            query=query,
            status=body.status,
            now=ctx.clock.now(),
        )
    return SavedSearchOut.model_validate(updated)


@router.delete(
    "/saved-searches/{saved_search_id}",
    response_model=SavedSearchDeleted,
    summary="Delete a saved search and the identities it has seen",
    description="Works without the add-on too. Events it already emitted stay in the feed.",
    responses=problem_responses(401, 403, 404),
)
async def delete_saved_search(
    saved_search_id: SavedSearchId, principal: AuthenticatedFree, ctx: Ctx
) -> SavedSearchDeleted:
    async with ctx.transaction() as session:
        deleted = await service.delete(session, principal, saved_search_id)
    return SavedSearchDeleted.model_validate(deleted)
