"""The OpenAPI document describes the resource endpoints and their problems."""

from __future__ import annotations

import httpx


async def test_openapi_documents_resource_endpoints(client: httpx.AsyncClient) -> None:
    schema = (await client.get("/openapi.json")).json()
    components = schema["components"]["schemas"]
    candidate = components["JurisdictionCandidate"]["properties"]
    assert {"slug", "confidence", "permit_number", "permit_id"} <= set(candidate)
    assert "AmbiguousProblem" not in components
    paths = schema["paths"]
    resource = paths["/api/v1/permits/{permit_id}"]["get"]
    (parameter,) = [p for p in resource["parameters"] if p["name"] == "permit_id"]
    assert parameter["schema"]["format"] == "uuid"
    for path, method in (
        ("/api/v1/permit-resolutions", "post"),
        ("/api/v1/permits/{permit_number}/inspections", "get"),
        ("/api/v1/permits/{permit_number}/conditions", "get"),
        ("/api/v1/permits/{permit_number}/history", "get"),
    ):
        responses = paths[path][method]["responses"]
        ambiguous = responses["300"]["content"]["application/problem+json"]["schema"]
        assert ambiguous["$ref"].endswith("/MultipleJurisdictionsProblem")
        for status in ("400", "401", "404", "429"):
            assert "application/problem+json" in responses[status]["content"], (path, status)
            assert "application/json" not in responses[status]["content"]
    assert "/api/v1/jurisdictions/coverage" in paths
    for name in ("PermitResource", "InspectionsResponse", "ConditionsResponse", "HistoryResponse"):
        freshness = components[name]["properties"]["data_freshness"]
        assert freshness["$ref"].endswith("/DataFreshness"), name
        assert "data_freshness" in components[name]["required"], name
