"""GET /api/v1/usage: both meters of the current month. Costs nothing and is not throttled."""

from __future__ import annotations

from fastapi import APIRouter

from permitapi.usage import service
from permitapi.usage.auth_dependencies import AuthenticatedFree, Ctx
from permitapi.usage.schemas import UsageResponse
from permitapi.web.openapi import problem_responses

router = APIRouter(tags=["usage"])


@router.get(
    "/usage",
    response_model=UsageResponse,
    summary="Meters of the current UTC month",
    responses=problem_responses(401),
)
async def get_usage(principal: AuthenticatedFree, ctx: Ctx) -> UsageResponse:
    async with ctx.sessionmaker() as session:
        report = await service.usage_report(session, principal, ctx.clock.now())
    return UsageResponse.model_validate(report)
