"""Jurisdiction directory endpoints."""

from __future__ import annotations

from fastapi import APIRouter

from permitapi.jurisdiction import service
from permitapi.jurisdiction.schemas import JurisdictionList
from permitapi.web.deps import Ctx

router = APIRouter(tags=["jurisdictions"])


@router.get(
    "/jurisdictions",
    response_model=JurisdictionList,
    summary="Supported jurisdictions (public)",
)
async def list_jurisdictions(ctx: Ctx) -> JurisdictionList:
    return JurisdictionList.model_validate(service.directory_listing(ctx.directory))
