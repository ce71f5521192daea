"""create_app(): the only module that imports routers; owns the lifespan."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Callable
from typing import Any

from fastapi import FastAPI
from starlette.routing import Route
from starlette.types import ASGIApp

from permitapi import __version__, composition
from permitapi.account import key_invalidation
from permitapi.config import Settings, get_settings
from permitapi.context import AppContext
from permitapi.demo.access import require_principal_or_demo
from permitapi.discovery.endpoints import router as discovery_router
from permitapi.event.endpoints import router as events_router
from permitapi.event.openapi_webhooks import add_webhooks
from permitapi.health.endpoints import router as health_router
from permitapi.jurisdiction.endpoints import router as jurisdiction_router
from permitapi.kit import gc_tuning
from permitapi.kit.clock import Clock
from permitapi.mcp.server import ToolServer
from permitapi.observability.endpoints import router as metrics_router
from permitapi.permit.lookup.endpoints import router as permit_router
from permitapi.permit.lookup.fast import path as hot_path
from permitapi.permit.operation.endpoints import router as operation_router
from permitapi.permit.resource.endpoints import router as permit_resource_router
from permitapi.playground.endpoints import router as playground_router
from permitapi.saved_search.endpoints import router as saved_search_router
from permitapi.source_health.endpoints import router as source_status_router
from permitapi.sources.registry import Directory
from permitapi.telemetry import logs
from permitapi.usage import auth_dependencies
from permitapi.usage.endpoints import router as usage_router
from permitapi.watch.endpoints import router as watch_router
from permitapi.web.body_limit import BodyLimitMiddleware
from permitapi.web.docs import install_docs
from permitapi.web.openapi import KeyUses, build_openapi
from permitapi.web.problems import install_problem_handlers
from permitapi.web.request_context import RequestContextMiddleware
from permitapi.web.route_guard import guard_included_routers
from permitapi.webhook.endpoints import router as webhook_router

API_PREFIX = "/api/v1"
DESCRIPTION = """Read-only status of building permits published by city and county permit portals
(LADBS, EPIC-LA and cities and counties on Accela Citizen Access).

Authenticate with the `X-API-Key` header. Every error is an RFC 9457 problem
(`application/problem+json`) with a stable `code`. Authenticated responses carry
`X-RateLimit-Limit`, `X-RateLimit-Remaining` (units of the endpoint's monthly meter) and
`X-RateLimit-Reset` (Unix time in seconds of the next UTC month start)."""


# How each authentication dependency uses X-API-Key, for the OpenAPI document's security
# requirements and rate-limit headers (web/ imports no domain, so it is told here).
KEY_USES: KeyUses = {
    auth_dependencies.require_principal: "required",
    auth_dependencies.require_principal_unthrottled: "required",
    auth_dependencies.require_principal_cached: "required",
    require_principal_or_demo: "demo",
    auth_dependencies.optional_principal: "optional",
}


def create_app(
    settings: Settings | None = None,
    *,
    clock: Clock | None = None,
    directory: Directory | None = None,
    extra_lifespans: list[Callable[[AppContext], Any]] | None = None,
    mounts: dict[str, ASGIApp] | None = None,
) -> FastAPI:
    """The API application. `mounts` adds ASGI apps under path prefixes (the portal simulator
    at /_sim in `permitapi dev`)."""
    settings = settings or get_settings()
    tool_server = ToolServer(settings)

    @contextlib.asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        ctx = composition.build_context(settings, clock, directory)
        app.state.ctx = ctx
        async with contextlib.AsyncExitStack() as stack:
            await stack.enter_async_context(tool_server.running())
            await stack.enter_async_context(
                key_invalidation.listening(settings.redis_url, settings.redis_namespace)
            )
            for enter in extra_lifespans or []:
                await stack.enter_async_context(enter(ctx))
            gc_before = gc_tuning.apply_thresholds(settings.gc_thresholds)
            try:
                yield
            finally:
                gc_tuning.restore(gc_before)
                await ctx.keys.aclose()
                await hot_path.close(ctx)
                await ctx.gateway.aclose()
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
    install_problem_handlers(app, refusal_headers=auth_dependencies.rate_limit_headers_for_refusal)
    # Added first, so it runs inside the request context (outermost) and before everything else.
    app.add_middleware(BodyLimitMiddleware, max_bytes=settings.max_request_body_bytes)
    app.add_middleware(
        RequestContextMiddleware, api_prefix=API_PREFIX, access_log=settings.access_log
    )

    # Routes are matched in order: the status lookup (the hot path) goes first. Its pattern,
    # /permits/{permit_number}/status, shadows no other route. The resource router stays after
    # discovery: /permits/search must never reach /permits/{permit_id}. Each router is
    # included at the top level (not under one /api/v1 router) so that route_guard can skip
    # a whole router whose paths cannot match.
    for router in (
        permit_router,
        discovery_router,
        jurisdiction_router,
        usage_router,
        operation_router,
        webhook_router,
        events_router,
        saved_search_router,
        watch_router,
        permit_resource_router,
    ):
        app.include_router(router, prefix=API_PREFIX)
    app.include_router(health_router)
    app.include_router(metrics_router)
    app.include_router(source_status_router)
    app.include_router(playground_router)
    # The remote tool server (MCP): {base_url}/mcp, with or without the trailing slash.
    for path in ("/mcp", "/mcp/"):
        app.router.routes.append(Route(path, tool_server, include_in_schema=False))
    for prefix, mounted in (mounts or {}).items():
        app.mount(prefix, mounted)
    install_docs(app)
    guard_included_routers(app)
    app.openapi = lambda: build_openapi(  # type: ignore[method-assign]
        app, key_uses=KEY_USES, additions=(add_webhooks,)
    )
    return app


def create_served_app() -> FastAPI:
    """The app as `permitapi serve` runs it (in every worker process): logging configured from
    the settings first, since uvicorn is told to leave logging alone."""
    settings = get_settings()
    logs.configure(settings.effective_log_format, settings.log_level)
    return create_app(settings)
