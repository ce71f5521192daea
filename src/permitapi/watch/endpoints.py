"""Watch endpoints: start and stop watching a permit, and the key's watches. No credits; the
plan caps active watches."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Path, Query, Response

from permitapi.permit.identity.service import permit_path
from permitapi.usage.auth_dependencies import AuthenticatedFree, Ctx
from permitapi.watch import service
from permitapi.watch.schemas import WatchEnrolled, WatchList, WatchRemoved
from permitapi.web.openapi import problem_responses

router = APIRouter(tags=["watches"])

PermitNumber = Annotated[str, Path(description="The permit number as the portal shows it")]
Jurisdiction = Annotated[
    str | None, Query(description="Slug; required when the number format is shared")
]


@router.get(
    "/permits/watches",
    response_model=WatchList,
    summary="The key's active watches",
    responses=problem_responses(401, 403),
)
async def list_watches(principal: AuthenticatedFree, ctx: Ctx) -> WatchList:
    return WatchList.model_validate(await service.list_watches(ctx, principal))


@router.post(
    "/permits/{permit_number}/watch",
    response_model=WatchEnrolled,
    response_model_exclude_none=True,
    status_code=201,
    summary="Watch a permit: its events reach the key's feed and webhooks",
    description="201 when newly watched, 200 when the key already watches it. The number is "
    "resolved as a status lookup resolves it (300 multiple_jurisdictions with candidates, 404 "
    "permit_not_found / jurisdiction_not_supported, 400 invalid_jurisdiction); a permit never "
    "looked up is read from its portal once (503 jurisdiction_unavailable when that fails). "
    "Live keys only (sandbox: 403 sandbox_not_supported). Active watches: free 1, developer "
    "10, pro 50, enterprise 250 (400 watch_limit_reached). No credits.",
    responses={
        200: {"description": "Already watching", "model": WatchEnrolled},
        **problem_responses(300, 400, 401, 403, 404, 503),
    },
)
async def watch_permit(
    permit_number: PermitNumber,
    principal: AuthenticatedFree,
    ctx: Ctx,
    response: Response,
    jurisdiction: Jurisdiction = None,
) -> WatchEnrolled:
    enrolled = await service.enroll(ctx, principal, permit_number, jurisdiction)
    answer = WatchEnrolled.model_validate(enrolled.body)
    if not enrolled.created:
        response.status_code = 200
    else:  # the watch itself: DELETE there ends it
        response.headers["Location"] = permit_path(
            answer.permit_number, "watch", answer.jurisdiction
        )
    return answer


@router.delete(
    "/permits/{permit_number}/watch",
    response_model=WatchRemoved,
    summary="Stop watching a permit",
    responses=problem_responses(400, 401, 403, 404),
)
async def unwatch_permit(
    permit_number: PermitNumber,
    principal: AuthenticatedFree,
    ctx: Ctx,
    jurisdiction: Jurisdiction = None,
) -> WatchRemoved:
    return WatchRemoved.model_validate(
        await service.unwatch(ctx, principal, permit_number, jurisdiction)
    )
