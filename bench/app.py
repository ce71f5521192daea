"""The server the benchmarks run: the real app (`create_app`) plus two bench-only routes and
a portal stand-in with a fixed latency (until the portal simulator is on main).

- `GET /bench/bare`: a bare FastAPI endpoint with a pydantic response model, the baseline.
- `GET /bench/portal-requests`: how many portal fetches this process made.

Bench-only adjustments, so the measurement is not cut short by limits meant for customers:
the Enterprise plan's burst window is raised (the burst check still runs on every request).
Environment: PERMITAPI_DATABASE_URL, BENCH_PORTAL_LATENCY (seconds), BENCH_SOURCE_CAP.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import os
from collections.abc import AsyncIterator

from fastapi import FastAPI
from pydantic import BaseModel

from permitapi.account import plans
from permitapi.app import create_app
from permitapi.config import Settings
from permitapi.context import AppContext
from permitapi.sources.base import (
    HealthProbe,
    NormalizedStatus,
    PermitSnapshot,
    SearchCriteria,
    SearchNotSupported,
    SearchPage,
)
from permitapi.sources.gateway import SourceGateway
from permitapi.sources.http import PortalHttp, SourcePolicy
from permitapi.sources.registry import Jurisdiction


class Item(BaseModel):
    id: int
    name: str
    price: float
    tags: list[str]


class FixedLatencyPortal:
    """Answers every permit number after a fixed delay, counting the requests."""

    slow = False

    def __init__(self, family: str, latency: float) -> None:
        self.family = family
        self.latency = latency
        self.requests = 0

    async def fetch_permit(self, jurisdiction: Jurisdiction, permit_number: str) -> PermitSnapshot:
        self.requests += 1
        await asyncio.sleep(self.latency)
        return PermitSnapshot(
            jurisdiction=jurisdiction.slug,
            permit_number=permit_number,
            raw_status="Issued",
            status=NormalizedStatus.ISSUED,
            permit_type="Bldg-Addition",
            address="1234 W Sunset Blvd, Los Angeles, CA 90026",
            work_description="Add a bedroom",
        )

    async def search(self, jurisdiction: Jurisdiction, criteria: SearchCriteria) -> SearchPage:
        raise SearchNotSupported(jurisdiction.slug, "bench")

    async def health(self, jurisdiction: Jurisdiction) -> HealthProbe:
        return HealthProbe(ok=True, detail="bench")


def create() -> FastAPI:
    enterprise = plans.PLANS[plans.PlanName.ENTERPRISE]
    plans.PLANS[plans.PlanName.ENTERPRISE] = dataclasses.replace(enterprise, burst_per_minute=10**9)
    portal = FixedLatencyPortal("ladbs", float(os.environ.get("BENCH_PORTAL_LATENCY", "0.2")))
    cap = int(os.environ.get("BENCH_SOURCE_CAP", "4"))

    @contextlib.asynccontextmanager
    async def plug_portal(ctx: AppContext) -> AsyncIterator[None]:
        await ctx.gateway.aclose()
        policies = {"ladbs": SourcePolicy(max_concurrency=cap)}
        ctx.http = PortalHttp(portal_base_url=None, policies=policies)
        ctx.gateway = SourceGateway(ctx.http, adapters={"ladbs": portal})
        yield

    app = create_app(Settings(), extra_lifespans=[plug_portal])

    @app.get("/bench/bare", response_model=Item)
    async def bare() -> Item:
        return Item(id=1, name="widget", price=9.99, tags=["a", "b"])

    @app.get("/bench/portal-requests")
    async def portal_requests() -> dict[str, int]:
        return {"requests": portal.requests}

    return app
