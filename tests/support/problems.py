"""The RFC 9457 problem every error answer is: stable code, request id, problem media type."""

from __future__ import annotations

import httpx

PROBLEM_KEYS = {"type", "title", "status", "detail", "instance", "code", "error", "request_id"}


def assert_problem(response: httpx.Response, status: int, code: str) -> dict[str, object]:
    assert response.status_code == status, response.text
    assert response.headers["content-type"].startswith("application/problem+json")
    body: dict[str, object] = response.json()
    assert body.keys() >= PROBLEM_KEYS
    assert body["code"] == code
    assert body["error"] == code
    assert body["status"] == status
    assert body["request_id"] == response.headers["x-request-id"]
    return body
