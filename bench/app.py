"""The server the benchmarks run: the real app (`create_app`, real adapters and `PortalHttp`)
plus one bench-only route. Portals are the portal simulator in its own process (`bench/sim.py`),
reached through PERMITAPI_PORTAL_BASE_URL exactly as in `permitapi dev`.

- `GET /bench/bare`: a bare FastAPI endpoint with a pydantic response model, the baseline.

Bench-only adjustment, so the measurement is not cut short by limits meant for customers:
the Enterprise plan's burst window is raised (the burst check still runs on every request).
Environment: the usual PERMITAPI_* settings (database, portal base URL, source policies);
BENCH_BURST_MEMORY=limits puts the burst windows on `limits`' synchronous memory storage.
"""

from __future__ import annotations

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
from permitapi.kit.burst import BurstLimiter, LimitsMemoryWindows


class Item(BaseModel):
    id: int
    name: str
    price: float
    tags: list[str]


@contextlib.asynccontextmanager
async def _limits_memory_burst(ctx: AppContext) -> AsyncIterator[None]:
    """BENCH_BURST_MEMORY=limits: burst windows on `limits`' synchronous memory storage
    instead of `LocalWindows` (the comparison recorded in docs/benchmarks.md)."""
    ctx.burst = BurstLimiter(local=LimitsMemoryWindows())
    yield


def create() -> FastAPI:
    enterprise = plans.PLANS[plans.PlanName.ENTERPRISE]
    plans.PLANS[plans.PlanName.ENTERPRISE] = dataclasses.replace(enterprise, burst_per_minute=10**9)
    lifespans = []
    if os.environ.get("BENCH_BURST_MEMORY") == "limits":
        lifespans.append(_limits_memory_burst)
    app = create_app(Settings(), extra_lifespans=lifespans)

    @app.get("/bench/bare", response_model=Item)
    async def bare() -> Item:
        return Item(id=1, name="widget", price=9.99, tags=["a", "b"])

    return app
