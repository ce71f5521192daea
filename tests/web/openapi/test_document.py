"""The served OpenAPI document as client generators read it: valid OpenAPI 3.1 (per
openapi-spec-validator), stable readable operationIds, tags, the X-API-Key security scheme on
keyed operations only, documented headers (rate limits, request id, Location on a 202), the 300
candidates body, problem codes per status, and examples that match their schemas.

No database is needed: /openapi.json is served by an app whose lifespan never ran.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from fastapi import FastAPI
from openapi_schema_validator import OAS31Validator
from openapi_spec_validator import validate

from permitapi.app import create_app
from permitapi.web import api_catalog
from permitapi.web.openapi import build_openapi, operation_ids

PROBLEM = "application/problem+json"
PUBLIC = {
    ("GET", "/api/v1/jurisdictions"),
    ("GET", "/api/v1/jurisdictions/coverage"),
    ("GET", "/api/v1/jurisdictions/requests"),
    ("GET", "/healthz"),
    ("GET", "/readyz"),
    ("GET", "/developers/status.json"),
}
# A keyless call is answered too: the anonymous demo (status, batch), jurisdiction requests.
KEY_OPTIONAL = {
    ("GET", "/api/v1/permits/{permit_number}/status"),
    ("POST", "/api/v1/permits/batch-status"),
    ("POST", "/api/v1/jurisdictions/request"),
}
RATE_LIMIT_HEADERS = {"X-RateLimit-Limit", "X-RateLimit-Remaining", "X-RateLimit-Reset"}
METHODS = {"get", "put", "post", "delete", "patch", "head", "options", "trace"}


@pytest.fixture(scope="module")
async def doc() -> dict[str, Any]:
    app = create_app()
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://test") as client:
        response = await client.get("/openapi.json")
    assert response.status_code == 200
    body: dict[str, Any] = response.json()
    return body


def operations(doc: dict[str, Any]) -> Iterator[tuple[str, str, dict[str, Any]]]:
    for path, item in doc["paths"].items():
        for method, operation in item.items():
            if method in METHODS:
                yield method.upper(), path, operation


def resolve(doc: dict[str, Any], node: dict[str, Any]) -> dict[str, Any]:
    while "$ref" in node:
        target: Any = doc
        for part in node["$ref"].removeprefix("#/").split("/"):
            target = target[part]
        node = target
    return node


def test_openapi_spec_validator_accepts_the_served_document(doc: dict[str, Any]) -> None:
    validate(doc)  # raises OpenAPIValidationError with the offending location
    assert doc["openapi"].startswith("3.1")


def test_every_operation_has_a_catalogued_readable_unique_operation_id(
    doc: dict[str, Any],
) -> None:
    ids = {(method, path): op["operationId"] for method, path, op in operations(doc)}
    assert len(set(ids.values())) == len(ids)
    for key, operation_id in ids.items():
        assert re.fullmatch(r"[a-z][A-Za-z0-9]*", operation_id), key
        # A new route needs its entry in permitapi/web/api_catalog.py: the generated
        # clients' method names are part of the contract.
        assert key in api_catalog.OPERATIONS, f"{key} has no entry in api_catalog.OPERATIONS"
        assert operation_id == api_catalog.OPERATIONS[key].operation_id
    assert ids[("GET", "/api/v1/permits/{permit_number}/status")] == "getPermitStatus"
    assert ids[("POST", "/api/v1/permits/batch-status")] == "batchPermitStatus"
    assert ids[("GET", "/api/v1/permits/search")] == "searchPermits"
    assert ids[("POST", "/api/v1/webhooks")] == "registerWebhook"


def test_operation_ids_do_not_depend_on_route_order() -> None:
    app = create_app()
    before = operation_ids(app)
    first_paths = list(app.openapi()["paths"])
    reordered = create_app()
    reordered.router.routes.reverse()
    for route in reordered.router.routes:
        included = getattr(route, "original_router", None)
        if included is not None and getattr(included, "prefix", "") == "/api/v1":
            included.routes.reverse()
    assert list(reordered.openapi()["paths"]) != first_paths  # the reordering took effect
    assert operation_ids(reordered) == before
    ids = {(m, p): op["operationId"] for m, p, op in operations(reordered.openapi())}
    assert ids == before


def test_uncatalogued_routes_are_named_from_their_endpoint() -> None:
    """Without a catalogue entry: the endpoint's name in camelCase; a name two such routes
    share gives both FastAPI's unique id instead (never first come, first served)."""
    app = FastAPI()

    def make(path: str, name: str) -> None:
        async def endpoint() -> dict[str, str]:
            return {}

        endpoint.__name__ = name
        app.add_api_route(path, endpoint, methods=["GET"])

    make("/things", "list_things")
    make("/a/thing", "get_thing")
    make("/b/thing", "get_thing")
    assert {path: ids for (_, path), ids in operation_ids(app).items()} == {
        "/things": "listThings",
        "/a/thing": "getThingAThingGet",
        "/b/thing": "getThingBThingGet",
    }
    assert build_openapi(app)["paths"]["/things"]["get"]["operationId"] == "listThings"


def test_tags_are_declared_with_descriptions(doc: dict[str, Any]) -> None:
    declared = {tag["name"]: tag.get("description") for tag in doc["tags"]}
    for method, path, operation in operations(doc):
        assert operation.get("tags"), (method, path)
        for tag in operation["tags"]:
            assert declared.get(tag), (method, path, tag)


def test_api_key_scheme_on_keyed_operations_only(doc: dict[str, Any]) -> None:
    scheme = doc["components"]["securitySchemes"]["ApiKeyAuth"]
    assert scheme == {**scheme, "type": "apiKey", "in": "header", "name": "X-API-Key"}
    assert "security" not in doc  # no global requirement: public operations need no key
    assert "/metrics" not in doc["paths"]  # public, for Prometheus; not part of the API
    public = set()
    for method, path, operation in operations(doc):
        security = operation.get("security")
        if security is None:
            public.add((method, path))
        elif (method, path) in KEY_OPTIONAL:
            assert security == [{"ApiKeyAuth": []}, {}], (method, path)
        else:
            assert security == [{"ApiKeyAuth": []}], (method, path)
            assert "401" in operation["responses"], (method, path)
    assert public == PUBLIC


def test_response_headers(doc: dict[str, Any]) -> None:
    for method, path, operation in operations(doc):
        keyed = "security" in operation
        for status, response in operation["responses"].items():
            headers = set(response.get("headers", {}))
            assert "X-Request-ID" in headers, (method, path, status)
            if keyed and status != "401":
                assert headers >= RATE_LIMIT_HEADERS, (method, path, status)
            if not keyed:
                assert not headers & RATE_LIMIT_HEADERS, (method, path, status)
            if status in ("429", "503"):
                assert "retry-after" in {h.lower() for h in headers}, (method, path, status)
            for header in response.get("headers", {}).values():
                assert resolve(doc, header)["schema"], (method, path, status)
    accepted = doc["paths"]["/api/v1/permits/{permit_number}/status"]["get"]["responses"]["202"]
    location = resolve(doc, accepted["headers"]["Location"])
    assert location["required"] is True
    assert {"Retry-After", "Preference-Applied", "X-Demo-Mode"} <= set(accepted["headers"])


def test_every_300_lists_candidates(doc: dict[str, Any]) -> None:
    seen = 0
    for method, path, operation in operations(doc):
        response = operation["responses"].get("300")
        if response is None:
            continue
        seen += 1
        schema = resolve(doc, response["content"][PROBLEM]["schema"])
        assert schema["title"] == "MultipleJurisdictionsProblem", (method, path)
        assert {"candidates", "permit_number", "code"} <= set(schema["required"])
        assert "`multiple_jurisdictions`" in response["description"]
    assert seen >= 6  # status, resolutions, inspections, conditions, history, watch


def test_problem_responses_name_their_codes(doc: dict[str, Any]) -> None:
    named = 0
    for method, path, operation in operations(doc):
        for status, response in operation["responses"].items():
            media = response.get("content", {}).get(PROBLEM)
            if media is None or not media["schema"]["$ref"].endswith("/Problem"):
                continue
            for code, example in media.get("examples", {}).items():
                value = resolve(doc, example)["value"]
                assert value["code"] == value["error"] == code, (method, path, status)
                assert value["status"] == int(status)
                assert f"`{code}`" in response["description"]
                named += 1
            if status == "401":
                assert set(media["examples"]) == {"invalid_api_key"}, (method, path)
    assert named > 100
    status = doc["paths"]["/api/v1/permits/{permit_number}/status"]["get"]["responses"]
    assert {"permit_not_found", "jurisdiction_not_supported"} <= set(
        status["404"]["content"][PROBLEM]["examples"]
    )
    assert {"rate_limit_exceeded", "burst_limit_exceeded", "demo_limit_exceeded"} <= set(
        status["429"]["content"][PROBLEM]["examples"]
    )
    search = doc["paths"]["/api/v1/permits/search"]["get"]["responses"]
    assert "filter_required" in search["400"]["content"][PROBLEM]["examples"]


def test_catalogued_codes_have_descriptions() -> None:
    codes = {
        code
        for entry in api_catalog.OPERATIONS.values()
        for cs in entry.codes.values()
        for code in cs
    }
    for status in (300, 400, 401, 409, 422, 429):
        codes |= set(
            api_catalog.shared_codes(status, has_parameters=True, has_body=True, idempotent=True)
        )
    assert codes - set(api_catalog.CODES) == set()


def test_examples_match_their_schemas(doc: dict[str, Any]) -> None:
    checked = 0

    def check(media: dict[str, Any], where: tuple[str, ...]) -> None:
        nonlocal checked
        values = [media["example"]] if "example" in media else []
        values += [resolve(doc, e)["value"] for e in media.get("examples", {}).values()]
        schema = {**media["schema"], "components": doc["components"]}
        for value in values:
            errors = list(OAS31Validator(schema).iter_errors(value))
            assert not errors, (where, [e.message for e in errors])
            checked += 1

    for method, path, operation in operations(doc):
        body = operation.get("requestBody", {}).get("content", {})
        for content_type, media in body.items():
            check(media, (method, path, "request", content_type))
        for status, response in operation["responses"].items():
            for content_type, media in response.get("content", {}).items():
                check(media, (method, path, status, content_type))
    assert checked > 100
    status = doc["paths"]["/api/v1/permits/{permit_number}/status"]["get"]["responses"]
    for code in ("200", "202", "300"):
        assert next(iter(status[code]["content"].values()))["example"], code
    batch = doc["paths"]["/api/v1/permits/batch-status"]["post"]
    assert batch["requestBody"]["content"]["application/json"]["example"]["permit_numbers"]
