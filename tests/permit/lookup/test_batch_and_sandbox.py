"""Batch status (always 200, per-item settlement), single flight, and sandbox demo data."""

from __future__ import annotations

import asyncio

import httpx

from permitapi.context import AppContext
from permitapi.sources.base import RetryLater
from tests.permit.helpers import used
from tests.support.accounts import make_account
from tests.support.fake_portal import FakePortal, snapshot

BATCH = "/api/v1/permits/batch-status"


async def test_batch_mixed_outcomes_settle_per_item(
    client: httpx.AsyncClient, ctx: AppContext, portal: FakePortal
) -> None:
    portal.add(snapshot("ladbs", "21030-20000-00256"))
    portal.add(snapshot("epicla", "UNC-BLDR250827010774"))
    key = (await make_account(ctx, "pro")).live_key
    numbers = [
        "21030-20000-00256",  # live
        "UNC-BLDR250827010774",  # live
        "21030-20000-99999",  # not found: consumes
        "BLD24-00123",  # ambiguous: consumes
        "hello",  # no jurisdiction: consumes
        "   ",  # invalid: released
    ]
    response = await client.post(
        BATCH, json={"permit_numbers": numbers}, headers={"X-API-Key": key}
    )
    assert response.status_code == 200, response.text
    body = response.json()
    assert [r["permit_number"] for r in body["results"]] == numbers[:2]
    assert all(r["source"] == "live_scrape" for r in body["results"])
    errors = {e["permit_number"]: e for e in body["errors"]}
    assert errors["21030-20000-99999"]["error"] == "not_found"
    assert errors["21030-20000-99999"]["jurisdiction_hint"] == "ladbs"
    assert errors["21030-20000-99999"]["status_code"] == 404
    assert errors["21030-20000-99999"]["retryable"] is False
    assert errors["BLD24-00123"]["error"] == "multiple_jurisdictions"
    assert errors["BLD24-00123"]["status_code"] == 300
    assert errors["BLD24-00123"]["jurisdiction_hint"] is not None
    assert errors["hello"]["error"] == "jurisdiction_not_supported"
    assert errors["   "]["error"] == "invalid_permit_number"
    assert body["operations"] == []
    assert await used(ctx, key) == 5
    assert response.headers["X-RateLimit-Remaining"] == str(25_000 - 5)


async def test_batch_upstream_failure_without_cache_releases(
    client: httpx.AsyncClient, ctx: AppContext, portal: FakePortal
) -> None:
    portal.fault = RetryLater("ladbs", "slow", reason="timeout")
    key = (await make_account(ctx, "pro")).live_key
    numbers = ["21030-20000-00001", "21030-20000-00002"]
    body = (
        await client.post(BATCH, json={"permit_numbers": numbers}, headers={"X-API-Key": key})
    ).json()
    assert [e["error"] for e in body["errors"]] == ["upstream_timeout", "upstream_timeout"]
    assert all(e["retryable"] and e["status_code"] == 503 for e in body["errors"])
    assert await used(ctx, key) == 0


async def test_batch_browser_backed_misses_become_operations(
    client: httpx.AsyncClient, ctx: AppContext, portal: FakePortal
) -> None:
    portal.add(snapshot("aca:sandiego", "BLD24-00123"))
    key = (await make_account(ctx, "pro")).live_key
    first = await client.get(
        "/api/v1/permits/BLD24-00123/status",
        params={"jurisdiction": "aca:sandiego"},
        headers={"X-API-Key": key},
    )
    assert first.status_code == 202
    from permitapi.composition import job_sources
    from permitapi.worker.runner import Worker

    await Worker(ctx, job_sources()).run_once()
    # Cached now, and remembered; force the cache stale by a different permit in the batch:
    body = (
        await client.post(
            BATCH, json={"permit_numbers": ["BLD24-00123"]}, headers={"X-API-Key": key}
        )
    ).json()
    assert body["results"][0]["source"] == "cached"
    assert await used(ctx, key) == 2


async def test_batch_size_limits(
    client: httpx.AsyncClient, ctx: AppContext, portal: FakePortal
) -> None:
    key = (await make_account(ctx, "pro")).live_key
    for numbers in ([], [f"21030-20000-{i:05d}" for i in range(26)]):
        response = await client.post(
            BATCH, json={"permit_numbers": numbers}, headers={"X-API-Key": key}
        )
        assert response.status_code == 400
        assert response.json()["code"] == "invalid_batch_size"
        assert response.headers["X-RateLimit-Remaining"] == "25000"
    bad = await client.post(BATCH, json={"numbers": []}, headers={"X-API-Key": key})
    assert bad.status_code == 400
    assert bad.json()["code"] == "invalid_body"
    # a refusal before the endpoint ran still carries the headers of an authenticated answer
    assert bad.headers["X-RateLimit-Remaining"] == "25000"
    assert await used(ctx, key) == 0
    assert portal.total_requests == 0


async def test_batch_fetches_concurrently_within_the_source_cap(
    client: httpx.AsyncClient, ctx: AppContext, portal: FakePortal
) -> None:
    # EPIC-LA ships with the default cap of 4 (LADBS's 25 would not bind a 25-permit batch).
    numbers = [f"UNC-BLDR2508270{i:05d}" for i in range(25)]
    for number in numbers:
        portal.add(snapshot("epicla", number))
    portal.latency = 0.1
    key = (await make_account(ctx, "pro")).live_key
    body = (
        await client.post(BATCH, json={"permit_numbers": numbers}, headers={"X-API-Key": key})
    ).json()
    assert len(body["results"]) == 25
    assert portal.peak_in_flight == ctx.http.policy("epicla").max_concurrency == 4
    assert await used(ctx, key) == 25


async def test_concurrent_misses_make_one_portal_request(
    client: httpx.AsyncClient, ctx: AppContext, portal: FakePortal
) -> None:
    portal.add(snapshot("ladbs", "21030-20000-00256"))
    portal.latency = 0.3
    key = (await make_account(ctx, "enterprise")).live_key
    responses = await asyncio.gather(
        *(
            client.get("/api/v1/permits/21030-20000-00256/status", headers={"X-API-Key": key})
            for _ in range(50)
        )
    )
    assert all(r.status_code == 200 for r in responses)
    assert portal.total_requests == 1
    assert await used(ctx, key) == 50


async def test_sandbox_status_and_batch_use_demo_data(
    client: httpx.AsyncClient, ctx: AppContext, portal: FakePortal
) -> None:
    account = await make_account(ctx, "free")
    headers = {"X-API-Key": account.sandbox_key}
    demo = await client.get("/api/v1/permits/21030-20000-00256/status", headers=headers)
    assert demo.status_code == 200
    assert demo.headers["X-Sandbox-Mode"] == "true"
    assert "X-RateLimit-Limit" not in demo.headers
    assert demo.json()["source"] == "cached"
    assert demo.json()["status_phase"] == "active"
    again = await client.get("/api/v1/permits/21030-20000-00256/status", headers=headers)
    assert again.json() == demo.json()
    missing = await client.get("/api/v1/permits/21030-20000-99999/status", headers=headers)
    assert missing.json()["code"] == "permit_not_found"
    ambiguous = await client.get("/api/v1/permits/BLD24-00123/status", headers=headers)
    assert ambiguous.status_code == 300
    accela = await client.get("/api/v1/permits/PMT-3200001/status", headers=headers)
    assert accela.json()["jurisdiction"] == "aca:sandiego"
    batch = await client.post(
        BATCH,
        json={"permit_numbers": ["CREB2025000372", "UNC-BLDR250827010774", "nope"]},
        headers=headers,
    )
    body = batch.json()
    assert [r["status_phase"] for r in body["results"]] == ["terminated", "pending"]
    assert body["errors"][0]["error"] == "jurisdiction_not_supported"
    assert batch.headers["X-Sandbox-Mode"] == "true"
    # More calls than the free burst of 3 a minute: sandbox is not throttled or metered.
    assert portal.total_requests == 0
    assert await used(ctx, account.sandbox_key) == 0
    assert await used(ctx, account.live_key) == 0


async def test_non_ascii_digits_in_a_permit_number_are_refused_before_any_portal_request(
    client: httpx.AsyncClient, ctx: AppContext, portal: FakePortal
) -> None:
    portal.add(snapshot("ladbs", "21030-20000-00256"))
    key = (await make_account(ctx, "pro")).live_key
    full_width = "".join(chr(ord(c) + 0xFEE0) if c.isdigit() else c for c in "21030-20000-00256")
    arabic_indic = "".join(chr(ord(c) - 48 + 0x0660) if c.isdigit() else c for c in "21030")
    details = []
    for number in (full_width, arabic_indic):
        single = await client.get(
            f"/api/v1/permits/{number}/status",
            params={"jurisdiction": "ladbs"},
            headers={"X-API-Key": key},
        )
        assert single.status_code == 400, single.text
        assert single.json()["code"] == "invalid_permit_number"
        details.append(str(single.json()["errors"][0]["message"]))
    assert "('21030-20000-00256'?)" in details[0]  # the ASCII form NFKC gives
    batch = await client.post(
        BATCH, json={"permit_numbers": [full_width, arabic_indic]}, headers={"X-API-Key": key}
    )
    assert batch.status_code == 200, batch.text
    assert {e["error"] for e in batch.json()["errors"]} == {"invalid_permit_number"}
    assert portal.total_requests == 0
    assert await used(ctx, key) == 0
