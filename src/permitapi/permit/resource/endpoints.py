"""Resolutions, the canonical permit resource, inspections, conditions and history.

Thin: parse, one service call inside the metered read, shape. `/permits/{permit_id}` takes a
UUID path convertor so literal siblings (`/permits/search`, `/permits/watches`) can never be
captured by it, whatever the order routers are included in.
"""

from __future__ import annotations

import uuid
from typing import Annotated, Any

from fastapi import APIRouter, Query, Request

from permitapi.errors import PROBLEM_CONTENT_TYPE
from permitapi.permit.lookup.metering import MeterTracker
from permitapi.permit.lookup.rate_limit_headers import settle_headers
from permitapi.permit.lookup.schemas import MultipleJurisdictionsProblem
from permitapi.permit.resource import service
from permitapi.permit.resource.resolution import resolve_permit
from permitapi.permit.resource.schemas import (
    ConditionsResponse,
    HistoryResponse,
    InspectionsResponse,
    PermitResource,
    Resolution,
    ResolutionRequest,
)
from permitapi.usage.auth_dependencies import Authenticated, Ctx
from permitapi.web.openapi import problem_responses

router = APIRouter(tags=["permits"])


_AMBIGUOUS: dict[int | str, dict[str, Any]] = {
    300: {
        "description": "Ambiguous number: ranked candidates, each with the permit_id it yields",
        "model": MultipleJurisdictionsProblem,
        "content": {
            PROBLEM_CONTENT_TYPE: {
                "schema": {"$ref": "#/components/schemas/MultipleJurisdictionsProblem"}
            }
        },
    }
}

JurisdictionParam = Annotated[
    str | None,
    Query(
        max_length=64,
        description="Jurisdiction slug; needed for shared number formats unless the number "
        "was looked up before in exactly one jurisdiction",
    ),
]


@router.post(
    "/permit-resolutions",
    response_model=Resolution,
    summary="Resolve a permit number (+ jurisdiction) to its canonical permit_id",
    description="No portal fetch and no lookup credit (burst-limited like every call).",
    responses={**_AMBIGUOUS, **problem_responses(400, 401, 404, 429)},
)
async def create_resolution(
    body: ResolutionRequest, principal: Authenticated, ctx: Ctx
) -> Resolution:
    async with ctx.sessionmaker() as session:
        return await resolve_permit(
            session,
            ctx.directory,
            body.permit_number,
            body.jurisdiction,
            sandbox=principal.is_sandbox,
        )


@router.get(
    "/permits/{permit_id:uuid}",
    response_model=PermitResource,
    summary="Canonical permit resource (latest successful representation)",
    description="Costs 1 lookup credit, kept on 200 and released on errors.",
    responses=problem_responses(401, 404, 429),
)
async def get_permit(
    permit_id: uuid.UUID, principal: Authenticated, ctx: Ctx, request: Request
) -> PermitResource:
    meter = MeterTracker()
    try:
        return await service.canonical_permit(ctx, principal, str(permit_id), meter)
    finally:
        settle_headers(request, meter)


# resource/service.py holds the rules (sandbox refusal, resolution, settlement of the credit).
_DETAIL_COST = (
    "Costs 1 lookup credit (kept on 200, 300 and 404 jurisdiction_not_supported). "
    "Sandbox keys get 404."
)

_DETAIL_ERRORS = {**_AMBIGUOUS, **problem_responses(400, 401, 404, 429)}


@router.get(
    "/permits/{permit_number}/inspections",
    response_model=InspectionsResponse,
    summary="Inspections from the latest successful representation",
    description=_DETAIL_COST,
    responses=_DETAIL_ERRORS,
)
async def get_inspections(
    permit_number: str,
    principal: Authenticated,
    ctx: Ctx,
    request: Request,
    jurisdiction: JurisdictionParam = None,
) -> InspectionsResponse:
    meter = MeterTracker()
    try:
        return await service.inspections(ctx, principal, permit_number, jurisdiction, meter)
    finally:
        settle_headers(request, meter)


@router.get(
    "/permits/{permit_number}/conditions",
    response_model=ConditionsResponse,
    summary="Conditions and holds from the latest successful representation",
    description="Needs a prior status lookup (404 permit_not_found with `status_url` otherwise). "
    + _DETAIL_COST,
    responses=_DETAIL_ERRORS,
)
async def get_conditions(
    permit_number: str,
    principal: Authenticated,
    ctx: Ctx,
    request: Request,
    jurisdiction: JurisdictionParam = None,
) -> ConditionsResponse:
    meter = MeterTracker()
    try:
        return await service.conditions(ctx, principal, permit_number, jurisdiction, meter)
    finally:
        settle_headers(request, meter)


@router.get(
    "/permits/{permit_number}/history",
    response_model=HistoryResponse,
    summary="Status timeline and workflow from the latest successful representation",
    description=_DETAIL_COST,
    responses=_DETAIL_ERRORS,
)
async def get_history(
    permit_number: str,
    principal: Authenticated,
    ctx: Ctx,
    request: Request,
    jurisdiction: JurisdictionParam = None,
) -> HistoryResponse:
    meter = MeterTracker()
    try:
        return await service.history(ctx, principal, permit_number, jurisdiction, meter)
    finally:
        settle_headers(request, meter)
