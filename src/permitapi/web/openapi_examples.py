"""The examples of the OpenAPI document: worked examples of a few operations (status, 202,
300, batch) and one named problem example per status and code (components/examples), shared
by every operation that can answer it. web/openapi.py places them."""

from __future__ import annotations

import re
from typing import Any

from permitapi import errors
from permitapi.errors import PROBLEM_TYPE_BASE
from permitapi.web import api_catalog

_TITLES = {
    cls.default_status: cls.title
    for cls in vars(errors).values()
    if isinstance(cls, type) and issubclass(cls, errors.ApiError)
}
_EXAMPLE_REQUEST_ID = "req_5f0c6f1e2b9d4c3aa1b2c3d4e5f60718"
_LADBS_NUMBER = "21010-10000-01234"
_LADBS_ID = "0b6f8a52-3c1e-5d7a-9e24-6f1d2c3b4a59"
_SYNCED = "2026-05-04T15:00:00Z"
_FRESHNESS = {
    "age_seconds": 1260,
    "cached": True,
    "refresh_available": True,
    "fetched_at": _SYNCED,
    "last_successful_fetch_at": _SYNCED,
    "last_attempted_fetch_at": _SYNCED,
    "is_stale": False,
    "stale_reason": None,
    "next_refresh_at": "2026-05-04T19:00:00Z",
}
_STATUS_EXAMPLE = {
    "permit_number": _LADBS_NUMBER,
    "permit_id": _LADBS_ID,
    "jurisdiction": "ladbs",
    "jurisdiction_display": "City of Los Angeles (LADBS)",
    "status": "Issued",
    "portal_status": "Issued",
    "status_phase": "active",
    "permit_type": "Bldg-Alter/Repair",
    "address": "1200 W 7TH ST 90017",
    "work_description": "Interior tenant improvement, 2nd floor offices",
    "source": "cached",
    "last_synced_at": _SYNCED,
    "data_freshness": _FRESHNESS,
}
_OPERATION_EXAMPLE = {
    "operation_id": "7d0c2b0e-4f7e-4a43-9a57-2f3f0d9b6b1e",
    "operation_type": "permit_refresh",
    "status": "pending",
    "poll_url": "/api/v1/operations/7d0c2b0e-4f7e-4a43-9a57-2f3f0d9b6b1e",
    "created_at": _SYNCED,
    "started_at": None,
    "completed_at": None,
    "result": None,
    "error": None,
}
_AMBIGUOUS_EXAMPLE = {
    "type": PROBLEM_TYPE_BASE + "multiple_jurisdictions",
    "title": "Multiple jurisdictions match",
    "status": 300,
    "detail": "Permit number 'BLD24-00123' matches 2 jurisdictions; repeat the request with "
    "one of them as the jurisdiction parameter.",
    "instance": "/api/v1/permits/BLD24-00123/status",
    "code": "multiple_jurisdictions",
    "error": "multiple_jurisdictions",
    "request_id": _EXAMPLE_REQUEST_ID,
    "permit_number": "BLD24-00123",
    "candidates": [
        {
            "slug": "aca:sbc",
            "display_name": "San Bernardino County",
            "confidence": "weak",
            "reason": "Shared Accela Citizen Access number format",
            "permit_number": "BLD24-00123",
            "permit_id": "3e9b1c6a-8f2d-5b4e-a1c7-2d9e8f7a6b51",
        },
        {
            "slug": "aca:ont",
            "display_name": "City of Ontario",
            "confidence": "weak",
            "reason": "Shared Accela Citizen Access number format",
            "permit_number": "BLD24-00123",
            "permit_id": "9a4d2f7e-1b3c-5e6f-8a9b-0c1d2e3f4a5b",
        },
    ],
    "example": "/api/v1/permits/BLD24-00123/status?jurisdiction=aca:sbc",
}
_BATCH_REQUEST_EXAMPLE = {"permit_numbers": [_LADBS_NUMBER, "BLD24-00123"]}
_BATCH_EXAMPLE = {
    "results": [{k: v for k, v in _STATUS_EXAMPLE.items() if k != "permit_type"}],
    "errors": [
        {
            "permit_number": "BLD24-00123",
            "error": "multiple_jurisdictions",
            "message": "Permit number 'BLD24-00123' matches 2 jurisdictions; pass one.",
            "jurisdiction_hint": "aca:sbc",
            "status_code": 300,
            "retryable": False,
        }
    ],
    "operations": [],
}
# (operationId, status or "request") -> a worked example.
_EXAMPLES: dict[tuple[str, str], dict[str, Any]] = {
    ("getPermitStatus", "200"): _STATUS_EXAMPLE,
    ("getPermitStatus", "202"): _OPERATION_EXAMPLE,
    ("getPermitStatus", "300"): _AMBIGUOUS_EXAMPLE,
    ("batchPermitStatus", "request"): _BATCH_REQUEST_EXAMPLE,
    ("batchPermitStatus", "200"): _BATCH_EXAMPLE,
    ("getOperation", "200"): _OPERATION_EXAMPLE,
}


class ProblemExamples:
    """The named problem examples (components/examples/<status>-<code>), shared by every
    operation that can answer the code; an example's `instance` is the first path using it in
    sorted order (with sample values), so it does not depend on route order."""

    def __init__(self) -> None:
        self._paths: dict[tuple[str, str], str] = {}

    def ref(self, status: str, code: str, path: str) -> dict[str, str]:
        known = self._paths.get((status, code))
        self._paths[(status, code)] = path if known is None else min(known, path)
        return {"$ref": f"#/components/examples/{status}-{code}"}

    def components(self) -> dict[str, Any]:
        return {
            f"{status}-{code}": _problem_example(int(status), code, path)
            for (status, code), path in sorted(self._paths.items())
        }


def _problem_example(status: int, code: str, path: str) -> dict[str, Any]:
    summary = api_catalog.CODES.get(code, code)
    value: dict[str, Any] = {
        "type": PROBLEM_TYPE_BASE + code,
        "title": _TITLES.get(status, "Error"),
        "status": status,
        "detail": summary + ".",
        "instance": _SAMPLE_PARAMETER.sub(_sample_value, path),
        "code": code,
        "error": code,
        "request_id": _EXAMPLE_REQUEST_ID,
    }
    if code == "burst_limit_exceeded":
        value["retry_after_seconds"] = 20
    if code == "idempotency_key_processing":
        value["retry_after"] = 1
    return {"summary": summary, "value": value}


_SAMPLE_PARAMETER = re.compile(r"\{([^}]+)\}")
_SAMPLE_VALUES = {"permit_number": _LADBS_NUMBER, "permit_id": _LADBS_ID, "slug": "ladbs"}


def _sample_value(match: re.Match[str]) -> str:
    return _SAMPLE_VALUES.get(match.group(1), "7d0c2b0e-4f7e-4a43-9a57-2f3f0d9b6b1e")


def add_examples(operation: dict[str, Any], operation_id: str) -> None:
    request = _EXAMPLES.get((operation_id, "request"))
    body = operation.get("requestBody", {}).get("content", {}).get("application/json")
    if request is not None and body is not None:
        body["example"] = request
    for status, response in operation["responses"].items():
        example = _EXAMPLES.get((operation_id, status))
        if example is None:
            continue
        for media in response.get("content", {}).values():
            media["example"] = example
