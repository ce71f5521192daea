"""OpenAPI 3.1 document shaping: a real problem schema on every error response, and what a
generated client needs.

FastAPI documents a 422 validation response on every route with parameters; this service never
sends 422 for validation (it sends a 400 problem), so those entries are replaced. A 422 the
route declares itself (idempotency_key_reuse) is a problem and stays.

`build_openapi` then, in this one place, gives every operation
- its stable operationId (web/api_catalog.py: keyed by method and path, so independent of the
  order routes are registered in),
- the `ApiKeyAuth` security scheme (`X-API-Key` header) when its dependencies authenticate a
  key: required, or optional (`{}` as the alternative) where a keyless call is answered too
  (the anonymous demo on status and batch, jurisdiction requests); public operations have none,
- the response headers it sends: `X-Request-ID` on every response, `X-RateLimit-*` on keyed
  operations (not on 401), `Retry-After` on 429 and 503, `Location` (and `Retry-After`,
  `Preference-Applied`) on a 202 that answers with an operation,
- the problem codes of each error status (in the description, and as named examples), the 300
  body with its candidates, and a few worked examples (status, 202, 300, batch; the examples
  themselves are in web/openapi_examples.py),
plus the document-level tag descriptions.

web/ imports no domain: which request dependencies read `X-API-Key` (and how) and the sections
built from a domain's schemas (the `webhooks` section, event/openapi_webhooks.py) are handed to
`build_openapi` by app.py.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any, Literal

from fastapi import FastAPI
from fastapi.dependencies.models import Dependant
from fastapi.openapi.utils import get_openapi
from fastapi.routing import APIRoute, RouteContext, iter_route_contexts
from pydantic import BaseModel, Field

from permitapi.errors import PROBLEM_CONTENT_TYPE
from permitapi.web import api_catalog, openapi_completion, openapi_examples

# How a request dependency uses X-API-Key: "required"; "optional" (keyless calls are answered
# too); "demo" (keyless calls are the anonymous demo). A route depending on none reads no key.
KeyUse = Literal["required", "demo", "optional"]
KeyUses = Mapping[Callable[..., Any], KeyUse]
# A step adding a section of the document built elsewhere (the `webhooks` section).
Addition = Callable[[dict[str, Any]], None]

_DESCRIPTIONS = {
    300: "Ambiguous: several jurisdictions match",
    400: "Invalid request (problem with a stable code naming the parameter)",
    401: "Missing, invalid or deactivated API key",
    403: "Not allowed for this key or plan",
    404: "Not found",
    405: "Method not allowed",
    409: "Conflict",
    413: "Request body larger than the limit (PERMITAPI_MAX_REQUEST_BODY_BYTES, 1 MiB)",
    422: "Idempotency key reused with a different body",
    429: "Monthly limit or per-minute burst exceeded",
    503: "Source temporarily unavailable; see Retry-After",
}


class ParameterIssue(BaseModel):
    parameter: str
    location: str
    message: str


class Problem(BaseModel):
    """RFC 9457 problem details, as every error of this API is sent."""

    type: str = Field(description="URI identifying the problem type")
    title: str
    status: int
    detail: str
    instance: str = Field(description="The request path")
    code: str = Field(description="Stable machine-readable code")
    error: str = Field(description="Alias of code")
    request_id: str
    parameter: str | None = Field(default=None, description="The invalid parameter, on 400s")
    errors: list[ParameterIssue] | None = None
    retry_after_seconds: int | None = Field(default=None, description="On burst 429s")
    retry_after: int | None = Field(default=None, description="On 409 idempotency_key_processing")


def problem_responses(*statuses: int) -> dict[int | str, dict[str, Any]]:
    """`responses=` entries documenting problem bodies for the given statuses."""
    return {
        status: {
            "description": _DESCRIPTIONS.get(status, "Error"),
            "model": Problem,
            "content": {PROBLEM_CONTENT_TYPE: {}},
        }
        for status in statuses
    }


def _problem_ref(status: int) -> dict[str, Any]:
    return {
        "description": _DESCRIPTIONS.get(status, "Error"),
        "content": {PROBLEM_CONTENT_TYPE: {"schema": {"$ref": "#/components/schemas/Problem"}}},
    }


def _is_fastapi_validation(response: dict[str, Any] | None) -> bool:
    if response is None:
        return False
    schema = response.get("content", {}).get("application/json", {}).get("schema", {})
    return bool(schema.get("$ref", "").endswith("/HTTPValidationError"))


SECURITY_SCHEME = "ApiKeyAuth"
# On every response of a keyed operation but its 401 (no key was resolved).
_KEYED_HEADERS = (
    "X-RateLimit-Limit",
    "X-RateLimit-Remaining",
    "X-RateLimit-Reset",
    "X-Sandbox-Mode",
)
_METHODS = ("get", "put", "post", "delete", "patch", "head", "options", "trace")

TAGS: list[dict[str, str]] = [
    {
        "name": "permits",
        "description": "Status lookups (one permit or a batch of up to 25), "
        "canonical permit resources, inspections, conditions and history",
    },
    {
        "name": "discovery",
        "description": "Search permits by criteria, without a permit number "
        "(live queries of the LADBS and EPIC-LA sources)",
    },
    {
        "name": "watches",
        "description": "Watch permits: their events reach the key's events feed and webhooks",
    },
    {
        "name": "saved searches",
        "description": "Saved discovery searches: new matches become events",
    },
    {
        "name": "webhooks",
        "description": "Signed event deliveries (Standard Webhooks), delivery "
        "history, replay, secret rotation",
    },
    {"name": "events", "description": "The key's canonical events feed (30 days)"},
    {
        "name": "operations",
        "description": "Durable asynchronous operations: poll the `Location` of a 202",
    },
    {
        "name": "jurisdictions",
        "description": "The jurisdiction directory, coverage, stats and "
        "analytics, and requests for new jurisdictions",
    },
    {"name": "usage", "description": "The key's meters for the current month"},
    {"name": "health", "description": "Liveness and readiness probes"},
    {"name": "status", "description": "Per-jurisdiction source health (the public status page)"},
]


def _header(description: str, kind: str = "string", *, required: bool = False) -> dict[str, Any]:
    """A components/headers entry."""
    return {
        "description": description,
        **({"required": True} if required else {}),
        "schema": {"type": kind},
    }


_HEADERS: dict[str, dict[str, Any]] = {
    "X-Request-ID": _header(
        "The request's id: the client's own X-Request-ID when valid (8-128 letters, digits, "
        "dots, dashes, underscores), else a generated one"
    ),
    "X-RateLimit-Limit": _header(
        "Units included this month on the endpoint's meter (lookup credits, or discovery "
        "searches on discovery endpoints; the demo's daily cap on keyless calls). Absent for "
        "sandbox keys, which get X-Sandbox-Mode: true",
        "integer",
    ),
    "X-RateLimit-Remaining": _header(
        "Units left on that meter (0 once overage accrues)", "integer"
    ),
    "X-RateLimit-Reset": _header(
        "Unix time in seconds when the meter resets (the next UTC month start)", "integer"
    ),
    "Retry-After": _header("Seconds to wait before retrying", "integer"),
    "Location": _header(
        "The operation's poll URL (GET /api/v1/operations/{operation_id})", required=True
    ),
    "Preference-Applied": _header(
        "`respond-async` when the request's `Prefer: respond-async` was honoured"
    ),
    "X-Demo-Mode": _header("`true` on keyless (anonymous demo) calls"),
    "X-Sandbox-Mode": _header("`true` on sandbox-key calls"),
}


def build_openapi(
    app: FastAPI, *, key_uses: KeyUses | None = None, additions: Sequence[Addition] = ()
) -> dict[str, Any]:
    """The served document. `key_uses`: the authentication dependencies and how each uses
    X-API-Key (security requirements, rate-limit headers); `additions`: sections built from
    domain schemas, applied where the document is completed (openapi_completion.complete)."""
    if app.openapi_schema:
        return app.openapi_schema
    schema = get_openapi(
        title=app.title,
        version=app.version,
        openapi_version="3.1.0",
        description=app.description,
        routes=app.routes,
        tags=app.openapi_tags,
    )
    components = schema.setdefault("components", {}).setdefault("schemas", {})
    components.pop("HTTPValidationError", None)
    components.pop("ValidationError", None)
    for _, _, operation in _operations(schema):
        responses = operation.setdefault("responses", {})
        had_validation = _is_fastapi_validation(responses.get("422"))
        if had_validation:
            responses.pop("422")
        if had_validation and "400" not in responses:
            responses["400"] = _problem_ref(400)
        if "requestBody" in operation and "413" not in responses:
            responses["413"] = _problem_ref(413)  # web/body_limit.py, before anything else
        for status, response in list(responses.items()):
            content = response.get("content", {})
            if PROBLEM_CONTENT_TYPE in content and "application/json" in content:
                content.pop("application/json")
            if PROBLEM_CONTENT_TYPE in content and not content[PROBLEM_CONTENT_TYPE]:
                responses[status] = _problem_ref(int(status))
    _describe_for_clients(app, schema, key_uses or {})
    openapi_completion.complete(schema, additions)
    app.openapi_schema = schema
    return schema


def _operations(schema: dict[str, Any]) -> Iterator[tuple[str, str, dict[str, Any]]]:
    for path, item in schema.get("paths", {}).items():
        for method, operation in item.items():
            if method in _METHODS:
                yield path, method, operation


def _routes(app: FastAPI) -> dict[tuple[str, str], RouteContext]:
    """The documented API routes by (METHOD, path), routers included (FastAPI keeps included
    routers as branches: `iter_route_contexts` is how get_openapi itself walks them)."""
    return {
        (method.upper(), str(context.path_format)): context
        for context in iter_route_contexts(app.routes)
        if isinstance(context.original_route, APIRoute) and context.include_in_schema
        for method in context.methods or ()
    }


def operation_ids(app: FastAPI) -> dict[tuple[str, str], str]:
    """Every documented operation's operationId: the catalogue's, else its endpoint's name in
    camelCase. A name two uncatalogued routes share falls back, for both, to FastAPI's unique
    id (camelCased), so no id depends on the order routes are registered in."""
    routes = _routes(app)
    fallback = {
        key: api_catalog.camel_case(str(route.name))
        for key, route in routes.items()
        if key not in api_catalog.OPERATIONS
    }
    taken = [entry.operation_id for entry in api_catalog.OPERATIONS.values()]
    taken += list(fallback.values())
    ids = {}
    for key, route in routes.items():
        entry = api_catalog.OPERATIONS.get(key)
        if entry is not None:
            ids[key] = entry.operation_id
        elif taken.count(fallback[key]) == 1:
            ids[key] = fallback[key]
        else:
            ids[key] = api_catalog.camel_case(str(route.unique_id))
    return ids


def _calls(dependant: Dependant) -> Iterator[Callable[..., Any] | None]:
    yield dependant.call
    for sub in dependant.dependencies:
        yield from _calls(sub)


def _key_use(route: RouteContext, key_uses: KeyUses) -> KeyUse | None:
    """How the operation uses X-API-Key: it is "required"; "optional" (keyless calls are
    answered too); "demo" (keyless calls are the anonymous demo); None: public, no key read.
    A route with several such dependencies takes the first of required, demo, optional."""
    calls = [call for call in _calls(route.dependant) if call is not None]
    found = {use for wanted, use in key_uses.items() if any(call is wanted for call in calls)}
    for use in _KEY_USE_ORDER:
        if use in found:
            return use
    return None


_KEY_USE_ORDER: tuple[KeyUse, ...] = ("required", "demo", "optional")


def _header_ref(name: str) -> dict[str, str]:
    return {"$ref": f"#/components/headers/{name}"}


def _add_headers(response: dict[str, Any], *names: str) -> None:
    headers = response.setdefault("headers", {})
    present = {name.lower() for name in headers}
    for name in names:
        if name.lower() not in present:
            headers[name] = _header_ref(name)


def _describe_for_clients(app: FastAPI, schema: dict[str, Any], key_uses: KeyUses) -> None:
    components = schema["components"]
    components["securitySchemes"] = {
        SECURITY_SCHEME: {
            "type": "apiKey",
            "in": "header",
            "name": "X-API-Key",
            "description": "An API key (`sk_live_...`, or `sk_test_...` for the sandbox)",
        }
    }
    components["headers"] = copy.deepcopy(_HEADERS)
    examples = openapi_examples.ProblemExamples()
    used_tags: set[str] = set()
    routes = _routes(app)
    ids = operation_ids(app)
    for path, method, operation in _operations(schema):
        key = (method.upper(), path)
        route = routes.get(key)
        operation_id = ids.get(key) or api_catalog.camel_case(f"{method}_{path}")
        operation["operationId"] = operation_id
        used_tags.update(operation.get("tags", []))
        key_use = _key_use(route, key_uses) if route is not None else None
        if key_use == "required":
            operation["security"] = [{SECURITY_SCHEME: []}]
        elif key_use is not None:
            operation["security"] = [{SECURITY_SCHEME: []}, {}]
        entry = api_catalog.OPERATIONS.get(key, api_catalog.Operation(operation_id))
        _describe_responses(schema, path, operation, entry, key_use, examples)
        openapi_examples.add_examples(operation, operation_id)
    described = [tag for tag in TAGS if tag["name"] in used_tags]
    named = {tag["name"] for tag in described}
    schema["tags"] = described + [{"name": name} for name in sorted(used_tags - named)]
    components["examples"] = examples.components()


def _describe_responses(
    schema: dict[str, Any],
    path: str,
    operation: dict[str, Any],
    entry: api_catalog.Operation,
    key_use: str | None,
    examples: openapi_examples.ProblemExamples,
) -> None:
    parameters = operation.get("parameters", [])
    traits = {
        "has_parameters": bool(parameters),
        "has_body": "requestBody" in operation,
        "idempotent": any(p.get("name") == "Idempotency-Key" for p in parameters),
    }
    ambiguous = "MultipleJurisdictionsProblem" in schema["components"]["schemas"]
    for status, response in operation["responses"].items():
        _add_headers(response, "X-Request-ID")
        if key_use is not None and status != "401":
            _add_headers(response, *_KEYED_HEADERS)
        if key_use == "demo":
            _add_headers(response, "X-Demo-Mode")
        if status in ("429", "503"):
            _add_headers(response, "Retry-After")
        content = response.get("content", {})
        if status == "202" and _schema_ref(content.get("application/json")).endswith(
            "/OperationOut"
        ):
            _add_headers(response, "Location", "Retry-After", "Preference-Applied")
        problem = content.get(PROBLEM_CONTENT_TYPE)
        if problem is None:
            continue
        ref = _schema_ref(problem)
        if status == "300" and ambiguous and ref.endswith("/Problem"):
            ref = "#/components/schemas/MultipleJurisdictionsProblem"
            problem["schema"] = {"$ref": ref}
        codes = list(
            dict.fromkeys(
                [
                    *entry.codes.get(int(status), ()),
                    *api_catalog.shared_codes(int(status), **traits),
                ]
            )
        )
        if not codes:
            continue
        listed = ", ".join(f"`{code}`" for code in codes)
        response["description"] = f"{response.get('description', '')}. Codes: {listed}."
        if ref.endswith("/Problem"):
            problem["examples"] = {code: examples.ref(status, code, path) for code in codes}


def _schema_ref(media: dict[str, Any] | None) -> str:
    return str(((media or {}).get("schema") or {}).get("$ref", ""))
