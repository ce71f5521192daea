"""POST /api/v1/permit-resolutions: deterministic ids, detection, ambiguity, errors, metering."""

from __future__ import annotations

import httpx
import pytest

from permitapi.context import AppContext
from permitapi.sources import detect
from tests.permit.helpers import keys_for, lookup_credits_used
from tests.support.permits import LADBS_NUMBER, full_snapshot, store
from tests.support.problems import assert_problem

URL = "/api/v1/permit-resolutions"
SHARED = "BLD2024-001234"  # the generic Accela format: dozens of agencies share it


@pytest.mark.parametrize(
    "variant",
    [LADBS_NUMBER, "21030 20000 00256", "210302000000256", " 21030-20000-256 "],
)
async def test_id_is_stable_across_formatting_variants(
    client: httpx.AsyncClient, ctx: AppContext, variant: str
) -> None:
    keys = await keys_for(ctx)
    response = await client.post(
        URL, json={"permit_number": variant, "jurisdiction": "ladbs"}, headers=keys.live
    )
    assert response.status_code == 200, response.text
    body = response.json()
    expected = str(detect.permit_id("ladbs", LADBS_NUMBER))
    assert body == {
        "permit_id": expected,
        "permit_number": LADBS_NUMBER,
        "jurisdiction": "ladbs",
        "jurisdiction_display": "City of Los Angeles (LADBS)",
        "confidence": "explicit",
        "resource_available": False,
        "resource_url": f"/api/v1/permits/{expected}",
        "status_url": f"/api/v1/permits/{LADBS_NUMBER}/status?jurisdiction=ladbs",
    }


async def test_id_includes_the_jurisdiction(client: httpx.AsyncClient, ctx: AppContext) -> None:
    keys = await keys_for(ctx)
    ids = set()
    for slug in ("aca:sandiego", "aca:sacramento"):
        response = await client.post(
            URL, json={"permit_number": "PRJ-1100001", "jurisdiction": slug}, headers=keys.live
        )
        assert response.status_code == 200, response.text
        ids.add(response.json()["permit_id"])
    assert len(ids) == 2


async def test_distinctive_format_is_detected(client: httpx.AsyncClient, ctx: AppContext) -> None:
    keys = await keys_for(ctx)
    response = await client.post(URL, json={"permit_number": "creb2025000372"}, headers=keys.live)
    assert response.status_code == 200, response.text
    body = response.json()
    assert (body["jurisdiction"], body["permit_number"], body["confidence"]) == (
        "epicla",
        "CREB2025000372",
        "detected",
    )
    assert body["permit_id"] == str(detect.permit_id("epicla", "CREB2025000372"))


async def test_stored_representation_makes_the_resource_available(
    client: httpx.AsyncClient, ctx: AppContext
) -> None:
    keys = await keys_for(ctx)
    permit_id = await store(ctx, full_snapshot())
    response = await client.post(URL, json={"permit_number": "210302000000256"}, headers=keys.live)
    body = response.json()
    assert body["permit_id"] == permit_id
    assert body["resource_available"] is True
    assert "status_url" not in body or body["status_url"] is None
    # Sandbox keys never read stored representations, so for them it is never available.
    sandbox = await client.post(URL, json={"permit_number": LADBS_NUMBER}, headers=keys.sandbox)
    assert sandbox.status_code == 200
    assert sandbox.json()["resource_available"] is False
    assert sandbox.headers["x-sandbox-mode"] == "true"


async def test_shared_format_is_300_with_every_candidate_and_its_id(
    client: httpx.AsyncClient, ctx: AppContext
) -> None:
    keys = await keys_for(ctx)
    response = await client.post(URL, json={"permit_number": SHARED}, headers=keys.live)
    body = assert_problem(response, 300, "multiple_jurisdictions")
    expected = detect.detect(ctx.directory, SHARED)
    assert len(expected) > 2
    candidates = body["candidates"]
    assert isinstance(candidates, list)
    assert [c["slug"] for c in candidates] == [c.slug for c in expected]
    for candidate in candidates:
        assert candidate["permit_id"] == str(detect.permit_id(candidate["slug"], SHARED))
        assert candidate["permit_number"] == SHARED
        assert candidate["confidence"] == "weak"


async def test_shared_format_looked_up_before_needs_no_jurisdiction(
    client: httpx.AsyncClient, ctx: AppContext
) -> None:
    keys = await keys_for(ctx)
    permit_id = await store(
        ctx, full_snapshot(jurisdiction="aca:sandiego", permit_number=SHARED.lower())
    )
    response = await client.post(URL, json={"permit_number": SHARED}, headers=keys.live)
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["permit_id"] == permit_id
    assert body["jurisdiction"] == "aca:sandiego"
    assert body["confidence"] == "previously_looked_up"
    assert body["resource_available"] is True


async def test_distinctive_format_wins_over_a_row_stored_elsewhere(
    client: httpx.AsyncClient, ctx: AppContext
) -> None:
    """The status lookup's rule (identity.match_jurisdiction): detection first, stored rows only
    when detection cannot decide. A row of the same number in another jurisdiction does not turn
    a distinctive LADBS number into a 300."""
    keys = await keys_for(ctx)
    await store(ctx, full_snapshot(jurisdiction="aca:sandiego", permit_number=LADBS_NUMBER))
    response = await client.post(URL, json={"permit_number": LADBS_NUMBER}, headers=keys.live)
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["jurisdiction"] == "ladbs"
    assert body["confidence"] == "detected"
    assert body["permit_id"] == str(detect.permit_id("ladbs", LADBS_NUMBER))
    assert body["resource_available"] is False


@pytest.mark.parametrize(
    ("payload", "status", "code"),
    [
        ({"permit_number": "ZZZ"}, 404, "jurisdiction_not_supported"),
        ({"permit_number": LADBS_NUMBER, "jurisdiction": "nowhere"}, 400, "invalid_jurisdiction"),
        ({"permit_number": "ABC-123", "jurisdiction": "ladbs"}, 400, "invalid_permit_number"),
        ({"permit_number": "   ", "jurisdiction": "ladbs"}, 400, "invalid_permit_number"),
        ({"permit_number": ""}, 400, "invalid_body"),
        ({"jurisdiction": "ladbs"}, 400, "invalid_body"),
        ({"permit_number": LADBS_NUMBER, "extra": 1}, 400, "invalid_body"),
        ({"permit_number": "x" * 65}, 400, "invalid_body"),
    ],
)
async def test_errors_are_problems(
    client: httpx.AsyncClient,
    ctx: AppContext,
    payload: dict[str, object],
    status: int,
    code: str,
) -> None:
    keys = await keys_for(ctx)
    response = await client.post(URL, json=payload, headers=keys.live)
    body = assert_problem(response, status, code)
    if code == "invalid_permit_number" and payload.get("permit_number") == "ABC-123":
        assert body["example_numbers"]


async def test_resolutions_cost_no_credit(client: httpx.AsyncClient, ctx: AppContext) -> None:
    keys = await keys_for(ctx)
    for payload in (
        {"permit_number": LADBS_NUMBER},
        {"permit_number": SHARED},
        {"permit_number": "ZZZ"},
        {"permit_number": LADBS_NUMBER, "jurisdiction": "nowhere"},
    ):
        await client.post(URL, json=payload, headers=keys.live)
    assert await lookup_credits_used(ctx, keys.principal) == 0


async def test_resolutions_are_burst_limited(client: httpx.AsyncClient, ctx: AppContext) -> None:
    keys = await keys_for(ctx, "free")  # 3 calls a minute
    statuses = [
        (
            await client.post(URL, json={"permit_number": LADBS_NUMBER}, headers=keys.live)
        ).status_code
        for _ in range(4)
    ]
    assert statuses == [200, 200, 200, 429]


async def test_needs_a_key(client: httpx.AsyncClient) -> None:
    response = await client.post(URL, json={"permit_number": LADBS_NUMBER})
    assert_problem(response, 401, "invalid_api_key")
