"""/healthz (the process answers) and /readyz (its dependencies answer)."""

from __future__ import annotations

import logging

from fastapi import APIRouter
from pydantic import BaseModel

from permitapi.db.engine import ping
from permitapi.errors import ServiceUnavailable
from permitapi.health.probes import ping_redis
from permitapi.usage.auth_dependencies import Ctx
from permitapi.web.openapi import problem_responses

router = APIRouter(tags=["health"])
log = logging.getLogger("permitapi.health")


class Health(BaseModel):
    status: str


@router.get("/healthz", response_model=Health, summary="Liveness")
async def healthz() -> Health:
    return Health(status="ok")


@router.get(
    "/readyz",
    response_model=Health,
    summary="Readiness",
    description=(
        "200 when the database answers and, when `PERMITAPI_REDIS_URL` is set, Redis answers; "
        "503 `database_unavailable` or `redis_unavailable` otherwise."
    ),
    responses=problem_responses(503),
)
async def readyz(ctx: Ctx) -> Health:
    try:
        await ping(ctx.engine)
    except Exception as exc:
        log.warning("not ready: the database did not answer (%s)", type(exc).__name__)
        raise ServiceUnavailable(
            "The database is not reachable.", code="database_unavailable"
        ) from exc
    if ctx.settings.redis_url:
        try:
            await ping_redis(ctx.settings.redis_url)
        except Exception as exc:
            log.warning("not ready: Redis did not answer (%s)", type(exc).__name__)
            raise ServiceUnavailable("Redis is not reachable.", code="redis_unavailable") from exc
    return Health(status="ready")
