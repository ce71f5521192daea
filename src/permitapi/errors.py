"""The error hierarchy and its rendering as RFC 9457 problem details.

    ApiError (status, code, title)            every error the API answers with
    ├── MultipleChoices (300)                 multiple_jurisdictions (ranked candidates)
    ├── BadRequest (400)                      invalid_parameter, invalid_body, ...
    ├── Unauthorized (401)                    invalid_api_key
    ├── Forbidden (403)                       force_refresh_not_available, ...
    ├── NotFound (404)                        not_found, permit_not_found, ...
    ├── MethodNotAllowed (405)
    ├── Conflict (409)                        idempotency_key_processing
    ├── Unprocessable (422)                   idempotency_key_reuse
    ├── TooManyRequests (429)                 rate_limit_exceeded, burst_limit_exceeded
    ├── ServiceUnavailable (503)              jurisdiction_unavailable, source_inconclusive, ...
    └── InternalError (500)                   internal_error: never for bad input

Every problem body carries type, title, status, detail, instance, code, error (alias of code)
and request_id, plus any extension members the error adds (for example retry_after_seconds).
Codes are stable strings: clients branch on them, so an existing code never changes meaning.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

PROBLEM_CONTENT_TYPE = "application/problem+json"
PROBLEM_TYPE_BASE = "https://permitapi.dev/problems/"


class ApiError(Exception):
    """Base of every error answered to a client; rendered by `problem_body`."""

    default_status: ClassVar[int] = 500
    default_code: ClassVar[str] = "internal_error"
    title: ClassVar[str] = "Internal server error"

    def __init__(
        self,
        detail: str,
        *,
        code: str | None = None,
        extra: Mapping[str, Any] | None = None,
        headers: Mapping[str, str] | None = None,
        status: int | None = None,
    ) -> None:
        super().__init__(detail)
        self.status = status or self.default_status
        self.detail = detail
        self.code = code or self.default_code
        self.extra: dict[str, Any] = dict(extra or {})
        self.headers: dict[str, str] = dict(headers or {})


class MultipleChoices(ApiError):
    """300: the number matches several jurisdictions; the body lists ranked candidates."""

    default_status = 300
    default_code = "multiple_jurisdictions"
    title = "Multiple jurisdictions match"


class BadRequest(ApiError):
    default_status = 400
    default_code = "invalid_parameter"
    title = "Bad request"


class Unauthorized(ApiError):
    default_status = 401
    default_code = "invalid_api_key"
    title = "Unauthorized"


class Forbidden(ApiError):
    default_status = 403
    default_code = "forbidden"
    title = "Forbidden"


class NotFound(ApiError):
    default_status = 404
    default_code = "not_found"
    title = "Not found"


class MethodNotAllowed(ApiError):
    default_status = 405
    default_code = "method_not_allowed"
    title = "Method not allowed"


class Conflict(ApiError):
    default_status = 409
    default_code = "conflict"
    title = "Conflict"


class Unprocessable(ApiError):
    default_status = 422
    default_code = "unprocessable"
    title = "Unprocessable request"


class PayloadTooLarge(ApiError):
    default_status = 413
    default_code = "payload_too_large"
    title = "Payload too large"


class UnsupportedMediaType(ApiError):
    default_status = 415
    default_code = "unsupported_media_type"
    title = "Unsupported media type"


class TooManyRequests(ApiError):
    default_status = 429
    default_code = "rate_limit_exceeded"
    title = "Too many requests"


class ServiceUnavailable(ApiError):
    default_status = 503
    default_code = "service_unavailable"
    title = "Service unavailable"


class InternalError(ApiError):
    default_status = 500
    default_code = "internal_error"
    title = "Internal server error"


def invalid_parameter(
    name: str, message: str, *, code: str = "invalid_parameter", location: str = "query"
) -> BadRequest:
    """A 400 naming the offending parameter in `parameter` and in `errors` (each issue with
    the `location` the OpenAPI ParameterIssue schema requires: query, path, header or body)."""
    return BadRequest(
        f"Invalid value for '{name}': {message}",
        code=code,
        extra={
            "parameter": name,
            "errors": [{"parameter": name, "location": location, "message": message}],
        },
    )


def problem_body(
    *,
    status: int,
    code: str,
    title: str,
    detail: str,
    instance: str,
    request_id: str,
    extra: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    body: dict[str, Any] = {
        "type": PROBLEM_TYPE_BASE + code,
        "title": title,
        "status": status,
        "detail": detail,
        "instance": instance,
        "code": code,
        "error": code,
        "request_id": request_id,
    }
    for key, value in (extra or {}).items():
        body.setdefault(key, value)
    return body
