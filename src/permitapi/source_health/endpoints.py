"""GET /developers/status.json: public per-jurisdiction source health (no key)."""

from __future__ import annotations

from collections import Counter
from dataclasses import asdict

from fastapi import APIRouter

from permitapi.source_health import service
from permitapi.source_health.schemas import StatusPage
from permitapi.usage.auth_dependencies import Ctx

router = APIRouter(tags=["status"])


@router.get(
    "/developers/status.json",
    response_model=StatusPage,
    summary="Source health per jurisdiction (public)",
)
async def status_page(ctx: Ctx) -> StatusPage:
    now = ctx.clock.now()
    async with ctx.sessionmaker() as session:
        report = await service.health_report(
            session, ctx.directory, now=now, circuit_of=ctx.http.circuit_state
        )
    counts = Counter(item.status for item in report)
    return StatusPage.model_validate(
        {
            "generated_at": now,
            "window_seconds": int(service.WINDOW.total_seconds()),
            "summary": {name: counts.get(name, 0) for name in ("operational", "degraded", "down")},
            "jurisdictions": [asdict(item) for item in report],
        }
    )
