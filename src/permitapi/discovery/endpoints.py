"""GET /api/v1/permits/search: discovery across LADBS and EPIC-LA.

Query parameters are read raw (see discovery.filters) and documented here for OpenAPI.
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request

from permitapi.account.plans import PARCELS_PER_SEARCH_MAX, Meter
from permitapi.discovery import service
from permitapi.discovery.filters import DEFAULT_LIMIT, MAX_LIMIT, MAX_RADIUS_MI, PERMIT_TYPES
from permitapi.discovery.schemas import SearchResponse, UnverifiableProblem
from permitapi.errors import PROBLEM_CONTENT_TYPE
from permitapi.usage.auth_dependencies import Authenticated, Ctx, record_meter, use_meter
from permitapi.web.openapi import problem_responses

router = APIRouter(tags=["discovery"])


def _param(name: str, schema: dict[str, Any], description: str) -> dict[str, Any]:
    return {
        "name": name,
        "in": "query",
        "required": False,
        "schema": schema,
        "description": description,
    }


_STRING = {"type": "string"}
_NUMBER = {"type": "number"}
_DATE = {"type": "string", "format": "date"}
PARAMETERS = [
    _param("city", _STRING, "`Los Angeles` (case-insensitive) selects `ladbs`"),
    _param("county", _STRING, "`Los Angeles County` selects `epicla` (unincorporated areas)"),
    _param("jurisdiction", {"type": "string", "enum": ["ladbs", "epicla"]},
           "One source; omitted: both, merged newest first"),
    {**_param("parcel", {"type": "array", "items": _STRING, "maxItems": PARCELS_PER_SEARCH_MAX},
              f"Repeatable; 1-{PARCELS_PER_SEARCH_MAX} distinct 10-digit APN/AIN values, "
              "spaces and hyphens ignored, duplicates collapsed; exact match"),
     "style": "form", "explode": True},
    _param("zip", _STRING, "5-digit ZIP (ZIP+4 accepted); best-effort address match on epicla"),
    _param("lat", _NUMBER, "Latitude of the circle's centre; with lon and radius_mi"),
    _param("lon", _NUMBER, "Longitude of the circle's centre; with lat and radius_mi"),
    _param("radius_mi", _NUMBER, f"Radius in miles, > 0 and <= {MAX_RADIUS_MI:g}"),
    _param("permit_type", {"type": "string", "enum": list(PERMIT_TYPES)}, "Case-insensitive"),
    _param("date_from", _DATE, "Issued on or after (YYYY-MM-DD)"),
    _param("date_to", _DATE, "Issued on or before (YYYY-MM-DD)"),
    _param("value_min", _NUMBER, "Valuation at least (dollars)"),
    _param("value_max", _NUMBER, "Valuation at most (dollars)"),
    _param("status", _STRING, "Portal status text"),
    _param("cursor", _STRING, "next_cursor of the previous page; resend the same filters"),
    _param("limit", {"type": "integer", "minimum": 1, "maximum": MAX_LIMIT,
                     "default": DEFAULT_LIMIT}, "Results per page"),
]  # fmt: skip

_UNVERIFIABLE: dict[int | str, dict[str, Any]] = {
    503: {
        "description": "Empty result that cannot be verified: source_inconclusive or "
        "source_lagging; see Retry-After",
        "model": UnverifiableProblem,
        "content": {
            PROBLEM_CONTENT_TYPE: {"schema": {"$ref": "#/components/schemas/UnverifiableProblem"}}
        },
        "headers": {"Retry-After": {"schema": {"type": "integer"}}},
    }
}


@router.get(
    "/permits/search",
    response_model=SearchResponse,
    summary="Discover permits by criteria across LADBS and EPIC-LA (one discovery search)",
    description=(
        "Live search of the city (ladbs) and county (epicla) sources, merged newest issue "
        "date first. At least one filter is required; a scope alone (city, county or "
        "jurisdiction) is one: `?city=Los Angeles` pages through every city permit newest "
        "first. `limit` and `cursor` are not filters. Each request or page costs one search "
        "on the discovery meter; 503s "
        "cost nothing. Unknown parameters and people filters (contractor, owner) are 400 "
        "`unsupported_filter`."
    ),
    dependencies=[use_meter(Meter.DISCOVERY)],
    responses={**problem_responses(400, 401, 403, 429), **_UNVERIFIABLE},
    openapi_extra={"parameters": PARAMETERS},
)
async def search_permits(request: Request, principal: Authenticated, ctx: Ctx) -> SearchResponse:
    answer = await service.search_permits(
        ctx, ctx.gateway, principal, request.query_params.multi_items()
    )
    record_meter(request, answer.meter)
    return SearchResponse.model_validate(answer.body)
