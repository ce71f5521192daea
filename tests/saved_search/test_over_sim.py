"""A saved search evaluated over the real LADBS and EPIC-LA adapters and the portal simulator:
the baseline is silent, a permit the city publishes afterwards is announced exactly once."""

from __future__ import annotations

import dataclasses
from datetime import date

import httpx

from permitapi.context import AppContext
from permitapi.portalsim.store import SimStore
from permitapi.saved_search.jobs import SavedSearchEvaluations
from tests.saved_search.conftest import create, feed, new_key, next_day, read, today, usage


async def test_a_permit_published_after_the_baseline_is_announced_once(
    client: httpx.AsyncClient, ctx: AppContext, simulator: SimStore
) -> None:
    key = await new_key(ctx, "pro")
    created = await create(client, key, {"city": "Los Angeles"}, name="Every city permit")
    # What the search endpoint answers for the same criteria: the baseline is its first page
    # of 100, counted by identity (the city's open data repeats a permit on some rows).
    page = await client.get(
        "/api/v1/permits/search", params={"city": "Los Angeles", "limit": 100},
        headers=key.headers,
    )  # fmt: skip
    newest = {(r["jurisdiction"], r["permit_number"]) for r in page.json()["results"]}
    assert 90 <= len(newest) <= 100
    credits = await usage(client, key)
    assert await SavedSearchEvaluations().run_due(ctx) == 1
    state = (await read(client, key, created["saved_search_id"]))["evaluation"]
    assert (state["state"], state["baseline_size"], state["last_error"]) == (
        "monitoring", len(newest), None,
    )  # fmt: skip
    assert await feed(client, key) == []

    template = max(simulator.of("ladbs"), key=lambda p: p.issued_date or date.min)
    number = "26019-90000-99999"
    issued = today(ctx)
    simulator.put(dataclasses.replace(template, permit_number=number, issued_date=issued))
    next_day(ctx)
    assert await SavedSearchEvaluations().run_due(ctx) == 1
    [event] = await feed(client, key)
    assert (event["event"], event["permit_number"], event["jurisdiction"]) == (
        "criteria_match", number, "ladbs",
    )  # fmt: skip
    match = event["data"]["match"]
    assert (match["permit_number"], match["issued_date"]) == (number, issued.isoformat())
    assert match["status"] == template.raw_status

    next_day(ctx)
    assert await SavedSearchEvaluations().run_due(ctx) == 1
    assert len(await feed(client, key)) == 1
    assert await usage(client, key) == credits
