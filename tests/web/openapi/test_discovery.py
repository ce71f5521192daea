"""The OpenAPI document describes discovery, stats and analytics with problem responses."""

from __future__ import annotations

import httpx


async def test_discovery_and_stats_are_documented(client: httpx.AsyncClient) -> None:
    schema = (await client.get("/openapi.json")).json()
    search = schema["paths"]["/api/v1/permits/search"]["get"]
    names = {p["name"] for p in search["parameters"]}
    assert {"parcel", "zip", "lat", "lon", "radius_mi", "cursor", "limit", "city"} <= names
    assert {"200", "400", "401", "403", "429", "503"} <= set(search["responses"])
    assert "retry-after" in {h.lower() for h in search["responses"]["503"].get("headers", {})}
    for path in ("/api/v1/jurisdictions/{slug}/stats", "/api/v1/jurisdictions/{slug}/analytics"):
        assert {"200", "401", "404"} <= set(schema["paths"][path]["get"]["responses"])
