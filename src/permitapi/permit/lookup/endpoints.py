"""GET /permits/{permit_number}/status and POST /permits/batch-status (thin: parse, call the
lookup service, shape headers). Answers are rendered with orjson from plain dicts: this is the
service's hot path."""

from __future__ import annotations

from typing import Annotated, Any

import orjson
from fastapi import APIRouter, Header, Query, Request
from fastapi.responses import Response

from permitapi.account.service import Principal
from permitapi.context import AppContext
from permitapi.demo.access import AuthenticatedOrDemo, require_principal_or_demo
from permitapi.errors import PROBLEM_CONTENT_TYPE
from permitapi.permit.lookup import sandbox_or_live
from permitapi.permit.lookup import service as lookup
from permitapi.permit.lookup.fast.route import direct_route, query_bool
from permitapi.permit.lookup.metering import MeterTracker
from permitapi.permit.lookup.schemas import (
    BatchRequest,
    BatchResponse,
    MultipleJurisdictionsProblem,
    PermitStatus,
)
from permitapi.permit.lookup.service import ItemOutcome, StatusQuery
from permitapi.permit.operation.schemas import OperationOut
from permitapi.usage.auth_dependencies import (
    Ctx,
    get_ctx_now,
    record_meter,
    refresh_rate_limit_headers,
)
from permitapi.web.openapi import problem_responses

router = APIRouter(tags=["permits"])

RESPOND_ASYNC = "respond-async"
OPERATION_RETRY_AFTER = "2"

_STATUS_RESPONSES: dict[int | str, dict[str, Any]] = {
    200: {"model": PermitStatus, "description": "The permit status record"},
    202: {
        "model": OperationOut,
        "description": "Accepted as a durable operation (browser-backed source with a cache "
        "miss, or force_refresh with Prefer: respond-async). Headers: Location (poll URL), "
        "Retry-After: 2, and Preference-Applied: respond-async when the client asked for it.",
    },
    300: {
        "model": MultipleJurisdictionsProblem,
        "description": "Ambiguous number: candidates ranked strongest first (consumes 1 credit)",
        "content": {
            PROBLEM_CONTENT_TYPE: {
                "schema": {"$ref": "#/components/schemas/MultipleJurisdictionsProblem"}
            }
        },
    },
    **problem_responses(400, 401, 403, 404, 429, 503),
}


def _json(body: Any, status: int = 200, headers: dict[str, str] | None = None) -> Response:
    return Response(orjson.dumps(body), status_code=status, media_type="application/json",
                    headers=headers)  # fmt: skip


def _wants_async(prefer: str | None) -> bool:
    if not prefer:
        return False
    return any(p.split(";")[0].strip().lower() == RESPOND_ASYNC for p in prefer.split(","))


async def _settled(
    request: Request, ctx: AppContext, principal: Principal, meter: MeterTracker
) -> None:
    if principal.is_sandbox:
        return
    if meter.state is not None:
        record_meter(request, meter.state)
    else:
        await refresh_rate_limit_headers(request, ctx, principal)


def _answer(item: ItemOutcome, *, preference_applied: bool) -> Response:
    if item.kind == "record":
        return _json(item.body)
    if item.kind == "operation":
        headers = {"Location": item.body["poll_url"], "Retry-After": OPERATION_RETRY_AFTER}
        if preference_applied:
            headers["Preference-Applied"] = RESPOND_ASYNC
        return _json(item.body, 202, headers)
    assert item.error is not None
    raise item.error


async def get_permit_status(
    request: Request,
    ctx: Ctx,
    principal: AuthenticatedOrDemo,
    permit_number: str,
    jurisdiction: Annotated[
        str | None, Query(description="Slug; required when the number format is shared")
    ] = None,
    force_refresh: Annotated[
        bool, Query(description="Live re-fetch; paid plans; 10 credits; 10 per hour")
    ] = False,
    near: Annotated[
        str | None, Query(description="`<lat>,<lon>`: orders candidates; malformed is ignored")
    ] = None,
    prefer: Annotated[
        str | None, Header(description="`respond-async` with force_refresh=true: operation")
    ] = None,
) -> Response:
    query = StatusQuery(
        permit_number=permit_number,
        jurisdiction=jurisdiction,
        force_refresh=force_refresh,
        near=lookup.parse_near(near),
        respond_async=_wants_async(prefer),
    )
    meter = MeterTracker()
    try:
        item = await sandbox_or_live.permit_status(ctx, principal, query, meter)
    finally:
        await _settled(request, ctx, principal, meter)
    return _answer(item, preference_applied=query.respond_async and query.force_refresh)


async def _status_direct(request: Request) -> Response:
    """GET status without FastAPI's parameter solver (`fast/route.py`): the same order as the
    declared signature (authentication and burst window first, then the parameters) and the
    same validation, then the endpoint above."""
    ctx = get_ctx_now(request)
    principal = await require_principal_or_demo(request, ctx)
    query = request.query_params
    force_refresh = query_bool(query, "force_refresh", default=False)
    return await get_permit_status(
        request,
        ctx,
        principal,
        request.path_params["permit_number"],
        jurisdiction=query.get("jurisdiction"),
        force_refresh=force_refresh,
        near=query.get("near"),
        prefer=request.headers.get("prefer"),
    )


router.add_api_route(
    "/permits/{permit_number}/status",
    get_permit_status,
    methods=["GET"],
    summary="Status of one permit (cache, live fetch or durable operation)",
    response_model=None,
    responses=_STATUS_RESPONSES,
    route_class_override=direct_route(_status_direct),
)


@router.post(
    "/permits/batch-status",
    summary="Status of up to 25 permits (always 200; check results, errors and operations)",
    response_model=BatchResponse,
    responses=problem_responses(400, 401, 429),
)
async def post_batch_status(
    request: Request, ctx: Ctx, principal: AuthenticatedOrDemo, payload: BatchRequest
) -> Response:
    meter = MeterTracker()
    try:
        body = await sandbox_or_live.batch_status(ctx, principal, payload.permit_numbers, meter)
    finally:
        await _settled(request, ctx, principal, meter)
    return _json(body)
