"""OpenAPI 3.1 document shaping: a real problem schema on every error response.

FastAPI documents a 422 validation response on every route with parameters; this service never
sends 422 for validation (it sends a 400 problem), so those entries are replaced. A 422 the
route declares itself (idempotency_key_reuse) is a problem and stays.
"""

from __future__ import annotations

from typing import Any

from fastapi import FastAPI
from fastapi.openapi.utils import get_openapi
from pydantic import BaseModel, Field

from permitapi.errors import PROBLEM_CONTENT_TYPE

_DESCRIPTIONS = {
    300: "Ambiguous: several jurisdictions match",
    400: "Invalid request (problem with a stable code naming the parameter)",
    401: "Missing, invalid or deactivated API key",
    403: "Not allowed for this key or plan",
    404: "Not found",
    405: "Method not allowed",
    409: "Conflict",
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


def build_openapi(app: FastAPI) -> dict[str, Any]:
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
    for path_item in schema.get("paths", {}).values():
        for operation in path_item.values():
            responses = operation.setdefault("responses", {})
            had_validation = _is_fastapi_validation(responses.get("422"))
            if had_validation:
                responses.pop("422")
            if had_validation and "400" not in responses:
                responses["400"] = _problem_ref(400)
            for status, response in list(responses.items()):
                content = response.get("content", {})
                if PROBLEM_CONTENT_TYPE in content and "application/json" in content:
                    content.pop("application/json")
                if PROBLEM_CONTENT_TYPE in content and not content[PROBLEM_CONTENT_TYPE]:
                    responses[status] = _problem_ref(int(status))
    app.openapi_schema = schema
    return schema
