"""Resolutions, the canonical permit resource, inspections, conditions and history.

Thin: parse, one service call inside the metered read, shape. `/permits/{permit_id}` takes a
UUID path convertor so literal siblings (`/permits/search`, `/permits/watches`) can never be
captured by it, whatever the order routers are included in.
"""

from __future__ import annotations

import uuid
from typing import Annotated, Any

from fastapi import APIRouter, Query, Request
from sqlalchemy.ext.asyncio import AsyncSession

from permitapi.account.service import Principal
from permitapi.context import AppContext
from permitapi.errors import PROBLEM_CONTENT_TYPE, NotFound
from permitapi.permit import identity, presenter, repository, resource
from permitapi.permit.models import PermitRecord
from permitapi.permit.resolution import resolve_permit
from permitapi.permit.resource_schemas import (
    ConditionsResponse,
    HistoryResponse,
    InspectionsResponse,
    PermitResource,
    Resolution,
    ResolutionRequest,
)
from permitapi.permit.schemas import DataFreshness, MultipleJurisdictionsProblem
from permitapi.sources.registry import Directory
from permitapi.web.deps import Authenticated, Ctx
from permitapi.web.metered import metered_read
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


def _freshness(ctx: AppContext, principal: Principal, row: PermitRecord) -> DataFreshness:
    """The status record's `data_freshness` (one builder, presenter) for a stored read."""
    return DataFreshness(
        **presenter.stored_freshness(
            row, now=ctx.clock.now(), refresh_available=principal.plan.force_refresh
        )
    )


def _sandbox_refused(principal: Principal, what: str) -> None:
    if principal.is_sandbox:
        raise NotFound(
            f"Sandbox keys cannot read {what}; use a live key.", code="sandbox_not_supported"
        )


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
    _sandbox_refused(principal, "canonical permit resources")

    async def read(session: AsyncSession) -> PermitResource:
        row = await repository.get_by_id(session, str(permit_id))
        if row is None or not row.snapshot:
            raise NotFound(
                f"No stored representation of permit {permit_id}. Resolve the number "
                "(POST /api/v1/permit-resolutions) and look its status up first.",
                code="permit_not_found",
            )
        return resource.canonical_resource(ctx.directory, row, _freshness(ctx, principal, row))

    return await metered_read(request, ctx, principal, read)


async def _stored(
    session: AsyncSession,
    directory: Directory,
    permit_number: str,
    jurisdiction: str | None,
    tail: str,
) -> PermitRecord:
    found, row = await identity.resolve(
        session, directory, permit_number, jurisdiction, example_tail=tail
    )
    if row is None:
        raise identity.not_looked_up(found, tail)
    return row


# web/metered.py settles the credit.
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
    _sandbox_refused(principal, "inspections")

    async def read(session: AsyncSession) -> InspectionsResponse:
        row = await _stored(session, ctx.directory, permit_number, jurisdiction, "inspections")
        return resource.inspections_view(ctx.directory, row, _freshness(ctx, principal, row))

    return await metered_read(request, ctx, principal, read)


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
    _sandbox_refused(principal, "conditions")

    async def read(session: AsyncSession) -> ConditionsResponse:
        row = await _stored(session, ctx.directory, permit_number, jurisdiction, "conditions")
        return resource.conditions_view(row, _freshness(ctx, principal, row))

    return await metered_read(request, ctx, principal, read)


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
    _sandbox_refused(principal, "history")

    async def read(session: AsyncSession) -> HistoryResponse:
        row = await _stored(session, ctx.directory, permit_number, jurisdiction, "history")
        return resource.history_view(row, _freshness(ctx, principal, row))

    return await metered_read(request, ctx, principal, read)
