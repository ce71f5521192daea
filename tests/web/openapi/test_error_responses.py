"""The OpenAPI 3.1 document: every error response of every operation is a Problem."""

from __future__ import annotations

from typing import Any

import httpx

PROBLEM_REF = "#/components/schemas/Problem"


async def document(client: httpx.AsyncClient) -> dict[str, Any]:
    response = await client.get("/openapi.json")
    assert response.status_code == 200
    body: dict[str, Any] = response.json()
    return body


def operations(doc: dict[str, Any]) -> list[tuple[str, str, dict[str, Any]]]:
    methods = {"get", "put", "post", "delete", "patch", "head", "options", "trace"}
    return [
        (path, method, operation)
        for path, item in doc["paths"].items()
        for method, operation in item.items()
        if method in methods
    ]


def resolve(doc: dict[str, Any], ref: str) -> dict[str, Any]:
    node: Any = doc
    for part in ref.removeprefix("#/").split("/"):
        node = node[part]
    assert isinstance(node, dict)
    return node


async def test_every_error_response_is_a_problem(client: httpx.AsyncClient) -> None:
    doc = await document(client)
    assert doc["openapi"].startswith("3.1")
    problem = doc["components"]["schemas"]["Problem"]
    assert set(problem["required"]) >= {
        "type", "title", "status", "detail", "instance", "code", "error", "request_id"
    }  # fmt: skip
    assert "HTTPValidationError" not in doc["components"]["schemas"]
    checked = 0
    for path, method, operation in operations(doc):
        for status, response in operation["responses"].items():
            if status.startswith("2"):
                continue
            content = response.get("content", {})
            assert list(content) == ["application/problem+json"], (path, method, status)
            ref = content["application/problem+json"]["schema"]["$ref"]
            schema = resolve(doc, ref)
            # The Problem itself, or a problem that adds members (e.g. 300 candidates).
            assert ref == PROBLEM_REF or set(schema["required"]) >= set(problem["required"]), (
                path,
                method,
                status,
            )
            checked += 1
    assert checked >= 5


async def test_success_responses_have_schemas(client: httpx.AsyncClient) -> None:
    doc = await document(client)
    for path, method, operation in operations(doc):
        successes = [s for s in operation["responses"] if s.startswith("2")]
        assert successes, (path, method)
        for status in successes:
            schema = operation["responses"][status]["content"]["application/json"]["schema"]
            assert schema, (path, method, status)
            if "$ref" in schema:
                assert resolve(doc, schema["$ref"])["properties"], (path, method)


async def test_all_refs_resolve(client: httpx.AsyncClient) -> None:
    doc = await document(client)

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            if isinstance(node.get("$ref"), str):
                resolve(doc, node["$ref"])
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    walk(doc)


async def test_idempotent_post_documents_its_header_and_problems(
    client: httpx.AsyncClient,
) -> None:
    doc = await document(client)
    operation = doc["paths"]["/api/v1/jurisdictions/request"]["post"]
    headers = [p for p in operation["parameters"] if p["in"] == "header"]
    assert [p["name"] for p in headers] == ["Idempotency-Key"]
    assert {"400", "401", "409", "422", "429"} <= set(operation["responses"])
    listing = doc["paths"]["/api/v1/jurisdictions/requests"]["get"]
    assert "400" in listing["responses"]
    schema = resolve(
        doc, listing["responses"]["200"]["content"]["application/json"]["schema"]["$ref"]
    )
    assert "requests" in schema["properties"]
