"""create_app(): the only module that imports routers; owns the lifespan."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Callable
from typing import Any

from fastapi import APIRouter, FastAPI

from permitapi import __version__
from permitapi.config import Settings, get_settings
from permitapi.context import AppContext
from permitapi.db.engine import create_engine, create_sessionmaker
from permitapi.discovery.endpoints import router as discovery_router
from permitapi.health.endpoints import router as health_router
from permitapi.jurisdiction.endpoints import router as jurisdiction_router
from permitapi.kit.clock import Clock, SystemClock
from permitapi.sources.gateway import SourceGateway
from permitapi.sources.http import PortalHttp
from permitapi.sources.registry import Directory, default_directory
from permitapi.usage.burst import BurstLimiter
from permitapi.usage.endpoints import router as usage_router
from permitapi.web.docs import install_docs
from permitapi.web.openapi import build_openapi
from permitapi.web.problems import install_problem_handlers
from permitapi.web.request_context import RequestContextMiddleware

API_PREFIX = "/api/v1"
DESCRIPTION = """Read-only status of building permits published by city and county permit portals
(LADBS, EPIC-LA and cities and counties on Accela Citizen Access).

Authenticate with the `X-API-Key` header. Every error is an RFC 9457 problem
(`application/problem+json`) with a stable `code`. Authenticated responses carry
`X-RateLimit-Limit`, `X-RateLimit-Remaining` (units of the endpoint's monthly meter) and
`X-RateLimit-Reset` (Unix time in seconds of the next UTC month start)."""


def build_context(settings: Settings, clock: Clock | None = None) -> AppContext:
    engine = create_engine(settings.database_url, pool_size=settings.database_pool_size)
    http = PortalHttp(portal_base_url=settings.portal_base_url)
    return AppContext(
        settings=settings,
        engine=engine,
        sessionmaker=create_sessionmaker(engine),
        clock=clock or SystemClock(),
        directory=default_directory(),
        burst=BurstLimiter(settings.redis_url),
        gateway=SourceGateway(http),
    )


def create_app(
    settings: Settings | None = None,
    *,
    clock: Clock | None = None,
    directory: Directory | None = None,
    extra_lifespans: list[Callable[[AppContext], Any]] | None = None,
) -> FastAPI:
    settings = settings or get_settings()

    @contextlib.asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        ctx = build_context(settings, clock)
        if directory is not None:
            ctx.directory = directory
        app.state.ctx = ctx
        async with contextlib.AsyncExitStack() as stack:
            for enter in extra_lifespans or []:
                await stack.enter_async_context(enter(ctx))
            try:
                yield
            finally:
                await ctx.gateway.http.aclose()
                await ctx.engine.dispose()

    app = FastAPI(
        title="permitapi",
        version=__version__,
        description=DESCRIPTION,
        lifespan=lifespan,
        docs_url=None,
        redoc_url=None,
        openapi_url="/openapi.json",
    )
    install_problem_handlers(app)
    app.add_middleware(RequestContextMiddleware)

    api = APIRouter(prefix=API_PREFIX)
    api.include_router(discovery_router)
    api.include_router(jurisdiction_router)
    api.include_router(usage_router)
    app.include_router(api)
    app.include_router(health_router)
    install_docs(app)
    app.openapi = lambda: build_openapi(app)  # type: ignore[method-assign]
    return app
