"""GET /metrics: the Prometheus text exposition of this process's metrics."""

from __future__ import annotations

import hmac

from fastapi import APIRouter, Request
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest
from starlette.responses import Response

from permitapi.errors import Unauthorized
from permitapi.observability import service
from permitapi.telemetry.metrics import REGISTRY
from permitapi.usage.auth_dependencies import Ctx
from permitapi.web.openapi import problem_responses

router = APIRouter(tags=["health"])


# Outside the API contract (operators scrape it; clients never call it), so it stays out of
# /openapi.json like the docs pages.
@router.get(
    "/metrics",
    include_in_schema=False,
    summary="Prometheus metrics",
    description=(
        "This process's request, portal, refusal and delivery counters, its circuit states, "
        "and the shared job queues' depth and oldest due age, in the Prometheus text format. "
        "Needs `Authorization: Bearer <PERMITAPI_METRICS_TOKEN>` when that setting is set."
    ),
    response_class=Response,
    responses={
        200: {"content": {CONTENT_TYPE_LATEST: {"schema": {"type": "string"}}}},
        **problem_responses(401),
    },
)
async def metrics(request: Request, ctx: Ctx) -> Response:
    token = ctx.settings.metrics_token
    if token is not None:
        sent = request.headers.get("authorization", "")
        expected = f"Bearer {token.get_secret_value()}"
        if not hmac.compare_digest(sent.encode(), expected.encode()):
            raise Unauthorized("A valid metrics bearer token is required.", code="invalid_token")
    await service.refresh_gauges(ctx)
    return Response(generate_latest(REGISTRY), media_type=CONTENT_TYPE_LATEST)
