"""GET /jurisdictions/{slug}/stats and /analytics over stored permits, and the directory count."""

from __future__ import annotations

import uuid
from datetime import date

import httpx

from permitapi.context import AppContext
from permitapi.jurisdiction.stats import median_days
from permitapi.permit.models import PermitRecord
from tests.support.accounts import make_account
from tests.support.problems import assert_problem


async def store(
    ctx: AppContext,
    slug: str,
    status: str | None,
    *,
    applied: date | None = None,
    issued: date | None = None,
    permit_type: str | None = "Building",
) -> None:
    number = uuid.uuid4().hex[:12].upper()
    async with ctx.transaction() as session:
        session.add(
            PermitRecord(
                permit_id=str(uuid.uuid4()),
                jurisdiction=slug,
                permit_number=number,
                display_number=number,
                normalized_status=status,
                permit_type=permit_type,
                applied_date=applied,
                issued_date=issued,
                created_at=ctx.clock.now(),
            )
        )


async def headers(ctx: AppContext) -> dict[str, str]:
    return {"X-API-Key": (await make_account(ctx)).live_key}


def test_median_threshold_and_rounding() -> None:
    day = date(2026, 1, 1)
    pairs = [(day, date(2026, 1, 1 + n)) for n in (1, 2, 3, 4)]
    assert median_days(pairs) == (None, 4)
    assert median_days([*pairs, (day, date(2026, 1, 6))]) == (3, 5)
    six = [(day, date(2026, 1, 1 + n)) for n in (1, 2, 3, 4, 5, 6)]
    assert median_days(six) == (4, 6)  # 3.5 rounds half up
    backwards = [(date(2026, 2, 1), day)] * 10
    assert median_days(backwards) == (None, 0)


async def test_stats_analytics_and_directory_agree(
    client: httpx.AsyncClient, ctx: AppContext
) -> None:
    slug = "aca:sandiego"
    for status in ("in_review", "issued", "inspections", "on_hold"):
        await store(ctx, slug, status, applied=date(2025, 3, 1), issued=None)
    for offset, status in enumerate(("finaled", "expired", "cancelled", "unknown")):
        await store(
            ctx,
            slug,
            status,
            applied=date(2025, 1, 10 + offset),
            issued=date(2025, 2, 1 + 2 * offset),
            permit_type="Electrical",
        )
    await store(
        ctx, slug, "issued", applied=date(2025, 1, 1), issued=date(2025, 6, 30), permit_type=None
    )
    await store(ctx, "ladbs", "issued", applied=date(2026, 1, 1), issued=date(2026, 1, 2))
    key = await headers(ctx)

    stats = await client.get(f"/api/v1/jurisdictions/{slug}/stats", headers=key)
    assert stats.status_code == 200, stats.text
    assert stats.json() == {
        "slug": slug,
        "display_name": stats.json()["display_name"],
        "active_permits_count": 5,
        "date_range": {"earliest": "2025-01-01", "latest": "2025-06-30"},
    }
    encoded = await client.get("/api/v1/jurisdictions/aca%3Asandiego/stats", headers=key)
    assert encoded.json() == stats.json()

    analytics = await client.get(f"/api/v1/jurisdictions/{slug}/analytics", headers=key)
    body = analytics.json()
    assert analytics.status_code == 200
    # intervals: 22, 23, 24, 25 days (+ 180 for the untyped one) -> median 24 of 5
    assert body == {
        "jurisdiction": slug,
        "display_name": stats.json()["display_name"],
        "median_processing_days": 24,
        "sample_size": 5,
        "permit_count": 9,
        "permits_by_type": {"Building": 4, "Electrical": 4, "Unspecified": 1},
        "date_range": {"earliest": "2025-01-01", "latest": "2025-06-30"},
    }

    listing = (await client.get("/api/v1/jurisdictions")).json()["jurisdictions"]
    counts = {j["slug"]: j["active_permits_count"] for j in listing}
    assert counts[slug] == 5
    assert counts["ladbs"] == 1
    assert counts["epicla"] == 0


async def test_small_or_empty_samples(client: httpx.AsyncClient, ctx: AppContext) -> None:
    key = await headers(ctx)
    await store(ctx, "epicla", "issued", applied=date(2026, 1, 1), issued=date(2026, 1, 5))
    body = (await client.get("/api/v1/jurisdictions/epicla/analytics", headers=key)).json()
    assert (body["median_processing_days"], body["sample_size"], body["permit_count"]) == (
        None,
        1,
        1,
    )
    empty = await client.get("/api/v1/jurisdictions/aca:sbc/stats", headers=key)
    assert empty.json()["active_permits_count"] == 0
    assert empty.json()["date_range"] == {"earliest": None, "latest": None}
    empty = await client.get("/api/v1/jurisdictions/aca:sbc/analytics", headers=key)
    assert empty.json()["permits_by_type"] == {}
    assert empty.json()["median_processing_days"] is None


async def test_unknown_slug_is_404_and_a_key_is_required(
    client: httpx.AsyncClient, ctx: AppContext
) -> None:
    key = await headers(ctx)
    for path in ("aca:nowhere/stats", "nowhere/analytics"):
        response = await client.get(f"/api/v1/jurisdictions/{path}", headers=key)
        assert assert_problem(response, 404, "jurisdiction_not_found")["slug"] in {
            "aca:nowhere",
            "nowhere",
        }
    assert_problem(await client.get("/api/v1/jurisdictions/ladbs/stats"), 401, "invalid_api_key")
    # stats cost no credits
    response = await client.get("/api/v1/jurisdictions/ladbs/stats", headers=key)
    assert response.status_code == 200
    usage = (await client.get("/api/v1/usage", headers=key)).json()
    assert (usage["lookup"]["used"], usage["discovery"]["used"]) == (0, 0)
