"""Every error is an RFC 9457 problem with a stable code and the request id."""

from __future__ import annotations

import httpx
import pytest

from tests.support.problems import assert_problem


async def test_unknown_route_is_a_404_problem(client: httpx.AsyncClient) -> None:
    response = await client.get("/api/v1/nope")
    body = assert_problem(response, 404, "not_found")
    assert body["instance"] == "/api/v1/nope"


async def test_wrong_method_is_a_405_problem(client: httpx.AsyncClient) -> None:
    response = await client.delete("/api/v1/jurisdictions")
    assert_problem(response, 405, "method_not_allowed")
    assert "GET" in response.headers["allow"]


@pytest.mark.parametrize(
    ("sent", "echoed"),
    [
        ("client-req-0001", True),
        ("a" * 128, True),
        ("short", False),
        ("a" * 129, False),
        ("has space inside", False),
        ("ünïcode-value", False),
    ],
)
async def test_request_id_echoed_only_when_valid(
    client: httpx.AsyncClient, sent: str, echoed: bool
) -> None:
    response = await client.get("/healthz", headers={"X-Request-ID": sent.encode()})
    returned = response.headers["x-request-id"]
    assert (returned == sent) is echoed
    assert 8 <= len(returned) <= 128


async def test_fresh_request_ids_differ(client: httpx.AsyncClient) -> None:
    first = (await client.get("/healthz")).headers["x-request-id"]
    second = (await client.get("/healthz")).headers["x-request-id"]
    assert first != second


async def test_problem_carries_client_request_id(client: httpx.AsyncClient) -> None:
    response = await client.get("/api/v1/usage", headers={"X-Request-ID": "trace-12345678"})
    body = assert_problem(response, 401, "invalid_api_key")
    assert body["request_id"] == "trace-12345678"


async def test_docs_are_served_without_a_cdn(client: httpx.AsyncClient) -> None:
    for page in ("/docs", "/redoc"):
        html = (await client.get(page)).text
        assert "cdn" not in html.lower()
        assert "/_docs-assets/" in html
    asset = await client.get("/_docs-assets/swagger-ui-bundle.js")
    assert asset.status_code == 200
    assert len(asset.content) > 100_000


async def test_readiness_checks_the_database(client: httpx.AsyncClient) -> None:
    assert (await client.get("/readyz")).json() == {"status": "ready"}
    assert (await client.get("/healthz")).json() == {"status": "ok"}
