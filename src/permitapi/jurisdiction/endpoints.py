"""Jurisdiction directory, coverage and requests (public); stats and analytics (keyed,
free of credits)."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Path, Query, Request

from permitapi.coverage import service as coverage
from permitapi.coverage.schemas import CoverageResponse
from permitapi.idempotency.route import idempotent_post
from permitapi.jurisdiction import anonymous, service, stats
from permitapi.jurisdiction.schemas import (
    JurisdictionAnalytics,
    JurisdictionList,
    JurisdictionRequestBody,
    JurisdictionRequestResult,
    JurisdictionStats,
    RequestedJurisdictionList,
)
from permitapi.usage.auth_dependencies import Authenticated, Ctx, MaybeAuthenticated
from permitapi.web.openapi import problem_responses
from permitapi.web.plain_int import PlainInt

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
    "/jurisdictions/requests",
    response_model=RequestedJurisdictionList,
    summary="Requested jurisdictions, most wanted first (public)",
    responses=problem_responses(400),
)
async def list_requested_jurisdictions(
    ctx: Ctx, limit: Annotated[PlainInt, Query(ge=1, le=200)] = 100
) -> RequestedJurisdictionList:
    async with ctx.sessionmaker() as session:
        listing = await service.requested_jurisdictions(session, limit)
    return RequestedJurisdictionList.model_validate(listing)


@idempotent_post(
    router,
    "/jurisdictions/request",
    response_model=JurisdictionRequestResult,
    summary="Request a jurisdiction (key optional; one vote per key or keyless address)",
    description="A live key votes once per jurisdiction. Without a key the request counts only "
    "in request_count, once per client address per jurisdiction, and each address may make "
    "10 keyless requests (by default) per rolling 24 hours (429 "
    "jurisdiction_request_limit_exceeded with Retry-After past that). A sandbox key changes "
    "nothing.",
    responses=problem_responses(400, 401, 409, 422, 429),
)
async def request_jurisdiction(
    request: Request, body: JurisdictionRequestBody, principal: MaybeAuthenticated, ctx: Ctx
) -> JurisdictionRequestResult:
    address_hash = None
    if principal is None:
        # A malformed request is refused before it uses up the caller's daily allowance.
        service.validate_request(body.jurisdiction_name, body.state)
        address_hash = await anonymous.admit(request, ctx)
    async with ctx.transaction() as session:
        result = await service.request_jurisdiction(
            session,
            ctx.directory,
            principal,
            jurisdiction_name=body.jurisdiction_name,
            state=body.state,
            now=ctx.clock.now(),
            address_hash=address_hash,
        )
    return JurisdictionRequestResult.model_validate(result)


@router.get(
    "/jurisdictions/coverage",
    response_model=CoverageResponse,
    summary="Capabilities and field coverage per jurisdiction (public)",
    description="Fill rates come from successful lookups in a rolling 90-day window; no "
    "permit or customer identifier is ever part of them.",
)
async def jurisdiction_coverage(ctx: Ctx) -> CoverageResponse:
    async with ctx.sessionmaker() as session:
        report = await coverage.coverage_report(session, ctx.directory, ctx.clock.now())
    return CoverageResponse.model_validate(report)


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
