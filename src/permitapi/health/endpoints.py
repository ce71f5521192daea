"""/healthz (the process answers) and /readyz (the database answers)."""

from __future__ import annotations

from fastapi import APIRouter
from pydantic import BaseModel

from permitapi.db.engine import ping
from permitapi.errors import ServiceUnavailable
from permitapi.web.deps import Ctx
from permitapi.web.openapi import problem_responses

router = APIRouter(tags=["health"])


class Health(BaseModel):
    status: str


@router.get("/healthz", response_model=Health, summary="Liveness")
async def healthz() -> Health:
    return Health(status="ok")


@router.get("/readyz", response_model=Health, summary="Readiness", responses=problem_responses(503))
async def readyz(ctx: Ctx) -> Health:
    try:
        await ping(ctx.engine)
    except Exception as exc:
        raise ServiceUnavailable(
            "The database is not reachable.", code="database_unavailable"
        ) from exc
    return Health(status="ready")
