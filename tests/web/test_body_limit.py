"""The request body limit in process, on both databases (the real-server run, with memory and
/healthz measured, is tests/acceptance/test_body_limit_dev_server.py): declared and chunked
bodies over PERMITAPI_MAX_REQUEST_BODY_BYTES are 413 before authentication, a body of exactly
the limit is served, and the OpenAPI document lists the 413 on every operation with a body."""

from __future__ import annotations

from collections.abc import AsyncIterator

import httpx
import orjson
import pytest

from permitapi.config import Settings
from tests.support.problems import assert_problem

LIMIT = 4096
BATCH = "/api/v1/permits/batch-status"
CURATED = "21030-20000-00256"
JSON = {"Content-Type": "application/json"}


@pytest.fixture
def settings(settings: Settings) -> Settings:
    return settings.model_copy(update={"max_request_body_bytes": LIMIT})


def padded(size: int) -> bytes:
    head = orjson.dumps({"permit_numbers": [CURATED]})[:-1]
    return head + b" " * (size - len(head) - 1) + b"}"


async def chunks(body: bytes, size: int = 1000) -> AsyncIterator[bytes]:
    """A streamed body: httpx sends it chunked, with no Content-Length."""
    for start in range(0, len(body), size):
        yield body[start : start + size]


async def test_declared_and_chunked_bodies_over_the_limit_are_413(
    client: httpx.AsyncClient,
) -> None:
    served = await client.post(BATCH, content=padded(LIMIT), headers=JSON)
    assert served.status_code == 200, served.text
    assert served.headers["x-demo-mode"] == "true"
    chunked = await client.post(BATCH, content=chunks(padded(LIMIT)), headers=JSON)
    assert chunked.status_code == 200, chunked.text
    for content in (padded(LIMIT + 1), chunks(padded(LIMIT + 1))):
        refused = await client.post(
            BATCH, content=content, headers={**JSON, "X-API-Key": "sk_live_not_a_key"}
        )
        body = assert_problem(refused, 413, "payload_too_large")
        assert body["max_body_bytes"] == LIMIT
        assert body["instance"] == BATCH


async def test_every_operation_with_a_body_documents_the_413(client: httpx.AsyncClient) -> None:
    document = (await client.get("/openapi.json")).json()
    with_body = [
        (path, method, operation)
        for path, item in document["paths"].items()
        for method, operation in item.items()
        if isinstance(operation, dict) and "requestBody" in operation
    ]
    assert len(with_body) >= 5
    for path, method, operation in with_body:
        response = operation["responses"].get("413")
        assert response is not None, (method, path)
        assert "payload_too_large" in response["description"], (method, path)
