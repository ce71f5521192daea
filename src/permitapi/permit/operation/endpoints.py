"""GET /operations/{operation_id}: owner-scoped polling that costs nothing and is not
burst-limited."""

from __future__ import annotations

from fastapi import APIRouter

from permitapi.permit.operation import service
from permitapi.permit.operation.schemas import OperationOut
from permitapi.usage.auth_dependencies import AuthenticatedFree, Ctx
from permitapi.web.openapi import problem_responses

router = APIRouter(tags=["operations"])


@router.get(
    "/operations/{operation_id}",
    response_model=OperationOut,
    summary="Poll an operation (owner only; free; not burst-limited)",
    responses=problem_responses(401, 404),
)
async def get_operation(operation_id: str, principal: AuthenticatedFree, ctx: Ctx) -> OperationOut:
    async with ctx.sessionmaker() as session:
        body = await service.get_for_owner(session, principal.api_key_id, operation_id)
    return OperationOut.model_validate(body)
