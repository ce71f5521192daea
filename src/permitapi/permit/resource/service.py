"""Stored reads: the canonical permit resource, inspections, conditions and history.

The rules every caller of these reads shares (the REST endpoints in `resource_endpoints` and the
tool server's tools): sandbox keys (and the keyless demo) are refused with 404
`sandbox_not_supported`; the number is resolved as `identity.resolve` does (400, 300, 404
`jurisdiction_not_supported`); a permit with no stored representation is 404
`permit_not_found` with the `status_url` that creates one (these reads never fetch); and each
read costs one lookup credit, settled by `metering.metered` (kept on 200, 300 and 404
jurisdiction_not_supported, released on every other error). The answer's `data_freshness` is
the status record's, built from the same row.
"""

from __future__ import annotations

from sqlalchemy.ext.asyncio import AsyncSession

from permitapi.account.service import Principal
from permitapi.context import AppContext
from permitapi.errors import NotFound
from permitapi.permit import repository
from permitapi.permit.identity import service as identity
from permitapi.permit.lookup import status_record
from permitapi.permit.lookup.metering import MeterTracker, metered
from permitapi.permit.lookup.schemas import DataFreshness
from permitapi.permit.models import PermitRecord
from permitapi.permit.resource import shape
from permitapi.permit.resource.schemas import (
    ConditionsResponse,
    HistoryResponse,
    InspectionsResponse,
    PermitResource,
)
from permitapi.sources.registry import Directory


def freshness(ctx: AppContext, principal: Principal, row: PermitRecord) -> DataFreshness:
    """The status record's `data_freshness` (one builder: `status_record.freshness`) for a
    stored read."""
    return DataFreshness(
        **status_record.stored_freshness(
            row, now=ctx.clock.now(), refresh_available=principal.plan.force_refresh
        )
    )


def refuse_sandbox(principal: Principal, what: str) -> None:
    if principal.is_sandbox:
        raise NotFound(
            f"Sandbox keys cannot read {what}; use a live key.", code="sandbox_not_supported"
        )


async def stored(
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


async def canonical_permit(
    ctx: AppContext, principal: Principal, permit_id: str, meter: MeterTracker
) -> PermitResource:
    """GET /permits/{permit_id}: the resource from the latest successful representation."""
    refuse_sandbox(principal, "canonical permit resources")

    async def read(session: AsyncSession) -> PermitResource:
        row = await repository.get_by_id(session, permit_id)
        if row is None or not row.snapshot:
            raise NotFound(
                f"No stored representation of permit {permit_id}. Resolve the number "
                "(POST /api/v1/permit-resolutions) and look its status up first.",
                code="permit_not_found",
            )
        return shape.canonical_resource(ctx.directory, row, freshness(ctx, principal, row))

    return await metered(ctx, principal, read, meter)


async def inspections(
    ctx: AppContext,
    principal: Principal,
    permit_number: str,
    jurisdiction: str | None,
    meter: MeterTracker,
) -> InspectionsResponse:
    refuse_sandbox(principal, "inspections")

    async def read(session: AsyncSession) -> InspectionsResponse:
        row = await stored(session, ctx.directory, permit_number, jurisdiction, "inspections")
        return shape.inspections_view(ctx.directory, row, freshness(ctx, principal, row))

    return await metered(ctx, principal, read, meter)


async def conditions(
    ctx: AppContext,
    principal: Principal,
    permit_number: str,
    jurisdiction: str | None,
    meter: MeterTracker,
) -> ConditionsResponse:
    refuse_sandbox(principal, "conditions")

    async def read(session: AsyncSession) -> ConditionsResponse:
        row = await stored(session, ctx.directory, permit_number, jurisdiction, "conditions")
        return shape.conditions_view(row, freshness(ctx, principal, row))

    return await metered(ctx, principal, read, meter)


async def history(
    ctx: AppContext,
    principal: Principal,
    permit_number: str,
    jurisdiction: str | None,
    meter: MeterTracker,
) -> HistoryResponse:
    refuse_sandbox(principal, "history")

    async def read(session: AsyncSession) -> HistoryResponse:
        row = await stored(session, ctx.directory, permit_number, jurisdiction, "history")
        return shape.history_view(row, freshness(ctx, principal, row))

    return await metered(ctx, principal, read, meter)
