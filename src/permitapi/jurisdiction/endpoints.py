"""Jurisdiction directory endpoints."""

from __future__ import annotations

from fastapi import APIRouter

from permitapi.jurisdiction import service
from permitapi.jurisdiction.coverage_schemas import CoverageResponse
from permitapi.jurisdiction.schemas import JurisdictionList
from permitapi.permit import coverage
from permitapi.web.deps import Ctx

router = APIRouter(tags=["jurisdictions"])


@router.get(
    "/jurisdictions",
    response_model=JurisdictionList,
    summary="Supported jurisdictions (public)",
)
async def list_jurisdictions(ctx: Ctx) -> JurisdictionList:
    return JurisdictionList.model_validate(service.directory_listing(ctx.directory))


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
