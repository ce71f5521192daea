"""How each operation is named and documented in the OpenAPI document (web/openapi.py).

`OPERATIONS` gives every operation, keyed by method and path, its operationId (the name the
generated Python and TypeScript clients use: `getPermitStatus`, `batchPermitStatus`, ...) and
the problem codes its documented error statuses can carry beyond the ones every operation
shares (`shared_codes`). The key is the route itself, so reordering or regrouping routers never
renames an operation. A route missing from the table is still named, from its endpoint
function (`watch_permit` -> `watchPermit`), but tests/web/openapi/test_document.py asks
for an entry: a generated client's method names are part of the public contract.

`CODES` is the one-line meaning of each problem code, shown as the summary of the code's
example in the document.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

_LOOKUP_429 = ("rate_limit_exceeded", "burst_limit_exceeded")
_IDENTITY_400 = ("invalid_permit_number", "invalid_jurisdiction")
_IDENTITY_404 = ("permit_not_found", "jurisdiction_not_supported")
_DETAIL_404 = (*_IDENTITY_404, "sandbox_not_supported")
_WEBHOOK_404 = ("webhook_not_found",)
_WEBHOOK_DELETED = ("webhook_deleted",)
_SAVED_SEARCH_403 = ("saved_search_not_available",)
_SAVED_SEARCH_404 = ("saved_search_not_found",)
_DISCOVERY_400 = (
    "filter_required",
    "unsupported_filter",
    "invalid_cursor",
    "conflicting_scope",
    "incomplete_radius",
    "too_many_parcels",
    "invalid_parcel",
    "invalid_zip",
    "invalid_city",
    "invalid_county",
    "invalid_jurisdiction",
    "invalid_lat",
    "invalid_lon",
    "invalid_radius_mi",
    "invalid_date_from",
    "invalid_date_to",
    "invalid_date_range",
    "invalid_value_min",
    "invalid_value_max",
    "invalid_value_range",
    "invalid_permit_type",
    "invalid_status",
    "invalid_limit",
)


@dataclass(frozen=True)
class Operation:
    operation_id: str
    codes: Mapping[int, tuple[str, ...]] = field(default_factory=dict)


OPERATIONS: dict[tuple[str, str], Operation] = {
    # permits
    ("GET", "/api/v1/permits/{permit_number}/status"): Operation(
        "getPermitStatus",
        {
            400: _IDENTITY_400,
            403: ("force_refresh_not_available",),
            404: _IDENTITY_404,
            429: (*_LOOKUP_429, "force_refresh_limit_exceeded", "demo_limit_exceeded"),
            503: ("jurisdiction_unavailable", "database_unavailable"),
        },
    ),
    ("POST", "/api/v1/permits/batch-status"): Operation(
        "batchPermitStatus",
        {400: ("invalid_batch_size",), 429: (*_LOOKUP_429, "demo_limit_exceeded")},
    ),
    ("POST", "/api/v1/permit-resolutions"): Operation(
        "resolvePermit", {400: _IDENTITY_400, 404: _IDENTITY_404}
    ),
    ("GET", "/api/v1/permits/{permit_id}"): Operation(
        "getPermit", {404: ("permit_not_found", "sandbox_not_supported")}
    ),
    ("GET", "/api/v1/permits/{permit_number}/inspections"): Operation(
        "getPermitInspections", {400: _IDENTITY_400, 404: _DETAIL_404}
    ),
    ("GET", "/api/v1/permits/{permit_number}/conditions"): Operation(
        "getPermitConditions", {400: _IDENTITY_400, 404: _DETAIL_404}
    ),
    ("GET", "/api/v1/permits/{permit_number}/history"): Operation(
        "getPermitHistory", {400: _IDENTITY_400, 404: _DETAIL_404}
    ),
    # discovery
    ("GET", "/api/v1/permits/search"): Operation(
        "searchPermits",
        {
            400: _DISCOVERY_400,
            403: ("sandbox_not_supported",),
            503: ("source_inconclusive", "source_lagging"),
        },
    ),
    # jurisdictions
    ("GET", "/api/v1/jurisdictions"): Operation("listJurisdictions"),
    ("GET", "/api/v1/jurisdictions/coverage"): Operation("getJurisdictionCoverage"),
    ("GET", "/api/v1/jurisdictions/requests"): Operation("listJurisdictionRequests"),
    ("POST", "/api/v1/jurisdictions/request"): Operation(
        "requestJurisdiction",
        {
            400: ("invalid_jurisdiction_name", "invalid_state"),
            409: ("jurisdiction_already_supported",),
            429: ("jurisdiction_request_limit_exceeded",),
        },
    ),
    ("GET", "/api/v1/jurisdictions/{slug}/stats"): Operation(
        "getJurisdictionStats", {404: ("jurisdiction_not_found",)}
    ),
    ("GET", "/api/v1/jurisdictions/{slug}/analytics"): Operation(
        "getJurisdictionAnalytics", {404: ("jurisdiction_not_found",)}
    ),
    # usage and operations
    ("GET", "/api/v1/usage"): Operation("getUsage"),
    ("GET", "/api/v1/operations/{operation_id}"): Operation(
        "getOperation", {404: ("operation_not_found",)}
    ),
    # webhooks
    ("POST", "/api/v1/webhooks"): Operation(
        "registerWebhook",
        {
            400: (
                "invalid_webhook_url",
                "invalid_event",
                "invalid_jurisdiction",
                "webhook_limit_reached",
            )
        },
    ),
    ("GET", "/api/v1/webhooks"): Operation("listWebhooks"),
    ("PATCH", "/api/v1/webhooks/{webhook_id}"): Operation(
        "updateWebhook",
        {
            400: ("invalid_webhook_url", "invalid_event", "invalid_jurisdiction"),
            404: _WEBHOOK_404,
            409: _WEBHOOK_DELETED,
        },
    ),
    ("DELETE", "/api/v1/webhooks/{webhook_id}"): Operation("deleteWebhook", {404: _WEBHOOK_404}),
    ("GET", "/api/v1/webhooks/{webhook_id}/deliveries"): Operation(
        "listWebhookDeliveries", {404: _WEBHOOK_404}
    ),
    ("POST", "/api/v1/webhooks/{webhook_id}/deliveries/{delivery_id}/replay"): Operation(
        "replayWebhookDelivery",
        {
            404: (*_WEBHOOK_404, "delivery_not_found"),
            409: ("delivery_pending", "webhook_inactive", *_WEBHOOK_DELETED),
        },
    ),
    ("POST", "/api/v1/webhooks/{webhook_id}/rotate-secret"): Operation(
        "rotateWebhookSecret", {404: _WEBHOOK_404, 409: _WEBHOOK_DELETED}
    ),
    ("POST", "/api/v1/webhooks/{webhook_id}/test"): Operation(
        "testWebhook",
        {404: _WEBHOOK_404, 409: _WEBHOOK_DELETED, 429: ("burst_limit_exceeded",)},
    ),
    ("POST", "/api/v1/webhooks/{webhook_id}/simulate"): Operation(
        "simulateWebhook",
        {
            400: ("invalid_event",),
            404: _WEBHOOK_404,
            409: _WEBHOOK_DELETED,
            429: ("burst_limit_exceeded",),
        },
    ),
    # events
    ("GET", "/api/v1/events"): Operation(
        "listEvents", {400: ("invalid_cursor",), 403: ("sandbox_not_supported",)}
    ),
    # saved searches
    ("POST", "/api/v1/saved-searches"): Operation(
        "createSavedSearch",
        {
            400: (
                "filter_required",
                "unsupported_filter",
                "invalid_date_range",
                "invalid_value_min",
                "invalid_value_max",
                "invalid_name",
                "saved_search_limit_reached",
            ),
            403: _SAVED_SEARCH_403,
        },
    ),
    ("GET", "/api/v1/saved-searches"): Operation("listSavedSearches", {403: _SAVED_SEARCH_403}),
    ("GET", "/api/v1/saved-searches/{saved_search_id}"): Operation(
        "getSavedSearch", {403: _SAVED_SEARCH_403, 404: _SAVED_SEARCH_404}
    ),
    ("PATCH", "/api/v1/saved-searches/{saved_search_id}"): Operation(
        "updateSavedSearch",
        {
            400: (
                "filter_required",
                "unsupported_filter",
                "invalid_date_range",
                "invalid_value_min",
                "invalid_value_max",
                "invalid_name",
            ),
            403: _SAVED_SEARCH_403,
            404: _SAVED_SEARCH_404,
        },
    ),
    ("DELETE", "/api/v1/saved-searches/{saved_search_id}"): Operation(
        "deleteSavedSearch", {403: _SAVED_SEARCH_403, 404: _SAVED_SEARCH_404}
    ),
    # watches
    ("GET", "/api/v1/permits/watches"): Operation("listWatches", {403: ("sandbox_not_supported",)}),
    ("POST", "/api/v1/permits/{permit_number}/watch"): Operation(
        "watchPermit",
        {
            400: (*_IDENTITY_400, "watch_limit_reached"),
            403: ("sandbox_not_supported",),
            404: _IDENTITY_404,
            503: ("jurisdiction_unavailable",),
        },
    ),
    ("DELETE", "/api/v1/permits/{permit_number}/watch"): Operation(
        "unwatchPermit", {403: ("sandbox_not_supported",), 404: ("watch_not_found",)}
    ),
    # health and status
    ("GET", "/healthz"): Operation("getHealth"),
    ("GET", "/readyz"): Operation(
        "getReadiness", {503: ("database_unavailable", "redis_unavailable")}
    ),
    ("GET", "/developers/status.json"): Operation("getSourceStatus"),
}


def shared_codes(
    status: int, *, has_parameters: bool, has_body: bool, idempotent: bool
) -> tuple[str, ...]:
    """Codes any operation with these traits can answer with the given status."""
    codes: list[str] = []
    if status == 300:
        codes.append("multiple_jurisdictions")
    elif status == 400:
        codes += ["invalid_parameter"] if has_parameters else []
        codes += ["invalid_body"] if has_body else []
        codes += ["invalid_idempotency_key"] if idempotent else []
    elif status == 401:
        codes.append("invalid_api_key")
    elif status == 413 and has_body:
        codes.append("payload_too_large")
    elif status == 409 and idempotent:
        codes.append("idempotency_key_processing")
    elif status == 422 and idempotent:
        codes.append("idempotency_key_reuse")
    elif status == 429:
        codes += list(_LOOKUP_429)
    return tuple(codes)


CODES: dict[str, str] = {
    "multiple_jurisdictions": "The number matches several jurisdictions; candidates are "
    "ranked strongest first",
    "invalid_parameter": "A query, path or header parameter is invalid (named in `parameter`)",
    "invalid_body": "The JSON body is invalid (the field is named in `parameter`)",
    "payload_too_large": "The request body is larger than the limit (`max_body_bytes`)",
    "invalid_idempotency_key": "The Idempotency-Key header is repeated, empty or too long",
    "invalid_permit_number": "The permit number is empty, not ASCII or cannot be a permit number",
    "invalid_jurisdiction": "Unknown jurisdiction slug",
    "invalid_batch_size": "A batch needs 1 to 25 permit numbers",
    "invalid_cursor": "The cursor is expired, invalid or was issued for other filters",
    "filter_required": "Discovery needs at least one filter",
    "unsupported_filter": "The filter is not supported (for example contractor)",
    "conflicting_scope": "The scope parameters select different sources (ladbs, epicla)",
    "incomplete_radius": "lat, lon and radius_mi go together",
    "too_many_parcels": "At most 25 parcels per search",
    "invalid_parcel": "A parcel number is malformed",
    "invalid_zip": "The ZIP code is malformed",
    "invalid_city": "The only searchable city is Los Angeles",
    "invalid_county": "The only searchable county is Los Angeles County",
    "invalid_lat": "Latitude is not a plain decimal from -90 to 90",
    "invalid_lon": "Longitude is not a plain decimal from -180 to 180",
    "invalid_radius_mi": "Radius is not a plain decimal above 0 and at most 25",
    "invalid_date_from": "date_from is not an ISO date (YYYY-MM-DD)",
    "invalid_date_to": "date_to is not an ISO date (YYYY-MM-DD)",
    "invalid_date_range": "The date range is reversed, or a date is outside 1900-01-01..2100-12-31",
    "invalid_value_min": "value_min is not a plain decimal from 0 to 1000000000000",
    "invalid_value_max": "value_max is not a plain decimal from 0 to 1000000000000",
    "invalid_value_range": "value_max is less than value_min",
    "invalid_permit_type": "Unknown permit type",
    "invalid_status": "The status text is too long or not printable",
    "invalid_limit": "The page size is out of range",
    "invalid_jurisdiction_name": "The requested name is not a place name (letters, spaces and "
    ". ' -, at most 100 characters)",
    "jurisdiction_request_limit_exceeded": "Keyless jurisdiction requests are capped per "
    "address per 24 hours",
    "invalid_state": "Not a US state code",
    "invalid_webhook_url": "The webhook URL is not an allowed public HTTPS destination",
    "invalid_event": "Unknown event name",
    "invalid_name": "The saved search name is empty or too long",
    "watch_limit_reached": "The plan's active watch cap is reached",
    "webhook_limit_reached": "The plan's active webhook cap is reached",
    "saved_search_limit_reached": "The plan's active saved search cap is reached",
    "invalid_api_key": "The X-API-Key header is missing, invalid or deactivated",
    "force_refresh_not_available": "force_refresh needs a paid plan and a live key",
    "sandbox_not_supported": "Sandbox keys cannot use this endpoint; use a live key",
    "saved_search_not_available": "Saved searches need a paid plan with the discovery add-on",
    "permit_not_found": "No such permit in the jurisdiction",
    "jurisdiction_not_supported": "No supported jurisdiction uses a number like this",
    "jurisdiction_not_found": "Unknown jurisdiction slug",
    "operation_not_found": "No such operation under this key",
    "webhook_not_found": "No such webhook under this key",
    "delivery_not_found": "No such delivery of this webhook",
    "saved_search_not_found": "No such saved search under this key",
    "watch_not_found": "This key does not watch the permit",
    "idempotency_key_processing": "The first request with this Idempotency-Key is still "
    "running; retry after `retry_after` seconds with the same body",
    "jurisdiction_already_supported": "The jurisdiction is already supported",
    "delivery_pending": "The original delivery is still being retried",
    "webhook_inactive": "The webhook is inactive",
    "webhook_deleted": "The webhook was deleted (deactivated for good)",
    "idempotency_key_reuse": "The Idempotency-Key was used with a different body",
    "rate_limit_exceeded": "The monthly limit is reached (wait for X-RateLimit-Reset, enable "
    "overage or change plan)",
    "burst_limit_exceeded": "The per-minute burst window is full; see Retry-After",
    "force_refresh_limit_exceeded": "At most 10 force_refresh calls per hour",
    "demo_limit_exceeded": "The keyless demo allows 30 calls per address per 24 hours",
    "jurisdiction_unavailable": "The portal is temporarily unavailable; see Retry-After",
    "database_unavailable": "The service's database is unreachable; see Retry-After",
    "redis_unavailable": "Redis is unreachable",
    "source_inconclusive": "An empty result could not be verified; see Retry-After",
    "source_lagging": "The source has not caught up; see Retry-After",
}


def camel_case(name: str) -> str:
    """`get_permit_status` -> `getPermitStatus`."""
    head, *rest = [part for part in name.split("_") if part]
    return head + "".join(part[:1].upper() + part[1:] for part in rest)
