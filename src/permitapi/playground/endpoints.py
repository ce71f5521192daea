"""GET / and GET /playground: the playground page; GET /playground/dataset.json: the curated
dataset it offers as examples (the same file the demo and sandbox answer from)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from fastapi import APIRouter
from fastapi.responses import HTMLResponse

from permitapi.permit.lookup.sandbox.dataset import raw_dataset

router = APIRouter(tags=["playground"], include_in_schema=False)
PAGE = Path(__file__).with_name("page.html")


@router.get("/", response_class=HTMLResponse)
@router.get("/playground", response_class=HTMLResponse)
async def playground() -> HTMLResponse:
    return HTMLResponse(PAGE.read_text(encoding="utf-8"))


@router.get("/playground/dataset.json")
async def dataset() -> dict[str, Any]:
    return raw_dataset()
