"""Jurisdiction directory (public), stats and analytics (keyed, free of credits)."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Path

from permitapi.jurisdiction import service, stats
from permitapi.jurisdiction.schemas import (
    JurisdictionAnalytics,
    JurisdictionList,
    JurisdictionStats,
)
from permitapi.web.deps import Authenticated, Ctx
from permitapi.web.openapi import problem_responses

router = APIRouter(tags=["jurisdictions"])

# `{slug:path}` would also swallow "/stats"; a plain segment already accepts ':' (aca:sandiego).
Slug = Annotated[str, Path(description="Jurisdiction slug, e.g. ladbs or aca:sandiego")]


@router.get(
    "/jurisdictions",
    response_model=JurisdictionList,
    summary="Supported jurisdictions (public)",
)
async def list_jurisdictions(ctx: Ctx) -> JurisdictionList:
    async with ctx.sessionmaker() as session:
        listing = await service.directory_listing(session, ctx.directory)
    return JurisdictionList.model_validate(listing)


@router.get(
    "/jurisdictions/{slug}/stats",
    response_model=JurisdictionStats,
    summary="Active permits and date range observed for one jurisdiction (no credits)",
    responses=problem_responses(401, 404, 429),
)
async def jurisdiction_stats(slug: Slug, principal: Authenticated, ctx: Ctx) -> JurisdictionStats:
    del principal  # a key is required; the figures cost no credits
    async with ctx.sessionmaker() as session:
        body = await stats.jurisdiction_stats(session, ctx.directory, slug)
    return JurisdictionStats.model_validate(body)


@router.get(
    "/jurisdictions/{slug}/analytics",
    response_model=JurisdictionAnalytics,
    summary="Processing time and permit mix observed for one jurisdiction (no credits)",
    responses=problem_responses(401, 404, 429),
)
async def jurisdiction_analytics(
    slug: Slug, principal: Authenticated, ctx: Ctx
) -> JurisdictionAnalytics:
    del principal
    async with ctx.sessionmaker() as session:
        body = await stats.jurisdiction_analytics(session, ctx.directory, slug)
    return JurisdictionAnalytics.model_validate(body)
