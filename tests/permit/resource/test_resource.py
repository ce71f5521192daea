"""GET /api/v1/permits/{permit_id}: the canonical resource with provenance on every value."""

from __future__ import annotations

from datetime import timedelta

import httpx
import pytest
from starlette.routing import Match

from permitapi.context import AppContext
from permitapi.kit.clock import FrozenClock
from permitapi.permit.resource.endpoints import router as resource_router
from permitapi.sources import detect
from permitapi.sources.base import NormalizedStatus
from permitapi.sources.status import NORMALIZATION_VERSION
from tests.permit.helpers import keys_for, lookup_credits_used
from tests.support.permits import LADBS_NUMBER, LADBS_URL, full_snapshot, store
from tests.support.problems import assert_problem


async def test_full_resource(client: httpx.AsyncClient, ctx: AppContext) -> None:
    keys = await keys_for(ctx)
    permit_id = await store(ctx, full_snapshot())
    response = await client.get(f"/api/v1/permits/{permit_id}", headers=keys.live)
    assert response.status_code == 200, response.text
    body = response.json()
    observed_at = "2026-11-22T12:00:00Z"
    provenance = {
        "source_system": "ladbs",
        "observed_at": observed_at,
        "normalization_version": NORMALIZATION_VERSION,
        "confidence": "normalized",
        "availability": "available",
        "source_url": LADBS_URL,
    }
    assert body["permit_id"] == permit_id == str(detect.permit_id("ladbs", LADBS_NUMBER))
    assert (body["permit_number"], body["jurisdiction"]) == (LADBS_NUMBER, "ladbs")
    assert body["observed_at"] == observed_at
    assert body["status"] == {"value": "issued", "raw_value": "Issued", "provenance": provenance}
    assert body["permit_type"] == {
        "value": "Bldg-Addition",
        "raw_value": "Bldg-Addition",
        "provenance": provenance,
    }
    # A field read from its own page carries that page as its source.
    assert body["address"]["provenance"]["source_url"] == LADBS_URL + "#address"
    assert body["valuation"] == {"value": 85000.0, "raw_value": None, "provenance": provenance}
    assert body["dates"]["issued"] == {
        "value": "2026-09-30",
        "raw_value": None,
        "provenance": provenance,
    }
    assert body["dates"]["finaled"] == {
        "value": None,
        "raw_value": None,
        "provenance": {**provenance, "availability": "not_observed", "confidence": None},
    }
    href = f"/api/v1/permits/{LADBS_NUMBER}/conditions?jurisdiction=ladbs"
    assert body["conditions"] == {"count": 3, "observed": True, "href": href}
    assert body["links"]["self"] == f"/api/v1/permits/{permit_id}"
    assert body["links"]["history"] == f"/api/v1/permits/{LADBS_NUMBER}/history?jurisdiction=ladbs"


async def test_fields_the_representation_lacks_are_not_observed(
    client: httpx.AsyncClient, ctx: AppContext
) -> None:
    keys = await keys_for(ctx)
    permit_id = await store(
        ctx,
        full_snapshot(
            permit_type=None,
            address="  ",
            valuation=None,
            applied_date=None,
            conditions=None,
            raw_status="Mystery State",
            status=NormalizedStatus.UNKNOWN,
        ),
    )
    body = (await client.get(f"/api/v1/permits/{permit_id}", headers=keys.live)).json()
    for field in (
        body["permit_type"],
        body["address"],
        body["valuation"],
        body["dates"]["applied"],
    ):
        assert field["value"] is None
        assert field["provenance"]["availability"] == "not_observed"
        assert field["provenance"]["confidence"] is None
    assert body["work_description"]["provenance"]["availability"] == "available"
    assert body["conditions"]["count"] == 0
    assert body["conditions"]["observed"] is False
    # An unmapped raw status is kept and flagged, never guessed.
    assert body["status"]["value"] == "unknown"
    assert body["status"]["raw_value"] == "Mystery State"
    assert body["status"]["provenance"]["confidence"] == "unmapped"


async def test_latest_representation_wins(
    client: httpx.AsyncClient, ctx: AppContext, clock: FrozenClock
) -> None:
    keys = await keys_for(ctx)
    await store(ctx, full_snapshot())
    clock.advance(timedelta(days=3))
    permit_id = await store(
        ctx, full_snapshot(raw_status="Permit Finaled", status=NormalizedStatus.FINALED)
    )
    body = (await client.get(f"/api/v1/permits/{permit_id}", headers=keys.live)).json()
    assert body["status"]["value"] == "finaled"
    assert body["status"]["provenance"]["observed_at"] == "2026-11-25T12:00:00Z"


async def test_reading_costs_one_credit_kept_on_200_released_on_404(
    client: httpx.AsyncClient, ctx: AppContext
) -> None:
    keys = await keys_for(ctx)
    permit_id = await store(ctx, full_snapshot())
    ok = await client.get(f"/api/v1/permits/{permit_id}", headers=keys.live)
    assert ok.status_code == 200
    assert await lookup_credits_used(ctx, keys.principal) == 1
    assert ok.headers["x-ratelimit-remaining"] == str(25_000 - 1)
    unknown = str(detect.permit_id("ladbs", "99999-99999-99999"))
    missing = await client.get(f"/api/v1/permits/{unknown}", headers=keys.live)
    assert_problem(missing, 404, "permit_not_found")
    assert await lookup_credits_used(ctx, keys.principal) == 1


async def test_sandbox_keys_get_404(client: httpx.AsyncClient, ctx: AppContext) -> None:
    keys = await keys_for(ctx)
    permit_id = await store(ctx, full_snapshot())
    response = await client.get(f"/api/v1/permits/{permit_id}", headers=keys.sandbox)
    assert_problem(response, 404, "sandbox_not_supported")


@pytest.mark.parametrize("path", ["search", "watches", "batch-status", "not-a-uuid"])
async def test_literal_siblings_are_never_captured(
    client: httpx.AsyncClient, ctx: AppContext, path: str
) -> None:
    keys = await keys_for(ctx)
    response = await client.get(f"/api/v1/permits/{path}", headers=keys.live)
    # The resource handler would say permit_not_found, and would have charged a credit.
    if path == "watches":  # its own route: the key's watch list
        assert response.status_code == 200
        assert "watches" in response.json()
    else:
        assert response.status_code != 200
        assert response.json()["code"] != "permit_not_found"
    assert await lookup_credits_used(ctx, keys.principal) == 0
    # And structurally: the route's own matcher refuses the literal (the router is mounted
    # under /api/v1, so its paths are relative to it).
    resource_routes = [
        route
        for route in resource_router.routes
        if getattr(route, "path", "").startswith("/permits/{permit_id")
    ]
    assert len(resource_routes) == 1

    def matches(target: str) -> bool:
        scope = {"type": "http", "method": "GET", "path": target}
        return resource_routes[0].matches(scope)[0] is Match.FULL

    assert matches(f"/permits/{detect.permit_id('ladbs', LADBS_NUMBER)!s}")
    assert not matches(f"/permits/{path}")
