"""Inspections, conditions and history from the latest successful representation."""

from __future__ import annotations

from datetime import date

import httpx
import pytest

from permitapi.context import AppContext
from permitapi.sources.base import Inspection
from tests.permit.helpers import keys_for, lookup_credits_used
from tests.support.permits import LADBS_NUMBER, full_snapshot, store
from tests.support.problems import assert_problem

SHARED = "BLD2024-001234"


def url(kind: str, number: str = LADBS_NUMBER, jurisdiction: str | None = None) -> str:
    query = f"?jurisdiction={jurisdiction}" if jurisdiction else ""
    return f"/api/v1/permits/{number}/{kind}{query}"


async def test_inspections(client: httpx.AsyncClient, ctx: AppContext) -> None:
    keys = await keys_for(ctx)
    await store(ctx, full_snapshot())
    response = await client.get(url("inspections"), headers=keys.live)
    assert response.status_code == 200, response.text
    body = response.json()
    assert (body["permit_number"], body["jurisdiction"], body["observed"]) == (
        LADBS_NUMBER,
        "ladbs",
        True,
    )
    assert body["inspections"][0] == {
        "type": "Foundation",
        "date": "2026-10-05",
        "result": "Approved",
        "inspector": "J. Ortiz",
    }
    assert body["pending"] == [{"type": "Drywall", "date": "2026-11-25"}]
    # LADBS's classifier: Approved and Partial Approval passed, Corrections Issued and Not Ready
    # for Inspection failed.
    assert body["pass_rate"] == 0.5


async def test_pass_rate_leaves_out_inspections_not_performed(
    client: httpx.AsyncClient, ctx: AppContext
) -> None:
    keys = await keys_for(ctx)
    results = ["Pass", "Fail", "Partial Pass", "Cancelled", "Rescheduled", None]
    inspections = [Inspection("Framing", date(2026, 10, 5), r) for r in results]
    await store(
        ctx,
        full_snapshot(jurisdiction="aca:sandiego", permit_number=SHARED, inspections=inspections),
    )
    body = (await client.get(url("inspections", SHARED), headers=keys.live)).json()
    assert body["pass_rate"] == 0.667


@pytest.mark.parametrize(
    ("inspections", "observed"),
    [(None, False), ([], True)],
)
async def test_pass_rate_is_null_without_completed_inspections(
    client: httpx.AsyncClient, ctx: AppContext, inspections: list[object] | None, observed: bool
) -> None:
    keys = await keys_for(ctx)
    await store(ctx, full_snapshot(inspections=inspections, pending_inspections=None))
    body = (await client.get(url("inspections", jurisdiction="ladbs"), headers=keys.live)).json()
    assert body["pass_rate"] is None
    assert body["observed"] is observed
    assert body["inspections"] == []
    assert body["pending"] == []


async def test_number_variants_and_explicit_jurisdiction_find_the_same_permit(
    client: httpx.AsyncClient, ctx: AppContext
) -> None:
    keys = await keys_for(ctx)
    await store(ctx, full_snapshot())
    for target in (url("history", "210302000000256"), url("history", jurisdiction="ladbs")):
        response = await client.get(target, headers=keys.live)
        assert response.status_code == 200, response.text
        assert response.json()["permit_number"] == LADBS_NUMBER


async def test_conditions(client: httpx.AsyncClient, ctx: AppContext) -> None:
    keys = await keys_for(ctx)
    await store(ctx, full_snapshot())
    body = (await client.get(url("conditions", jurisdiction="ladbs"), headers=keys.live)).json()
    assert body["observed"] is True
    assert body["summary"] == {"total": 3, "required": 2, "met": 1}
    assert body["groups"] == [
        {"name": "Clearances", "outstanding": 1, "complete": 1},
        {"name": "General", "outstanding": 1, "complete": 0},
    ]
    assert body["items"][0] == {
        "name": "Fire clearance",
        "status": "Required",
        "stage": "Plan Check",
        "group": "Clearances",
    }


async def test_conditions_not_observed(client: httpx.AsyncClient, ctx: AppContext) -> None:
    keys = await keys_for(ctx)
    await store(ctx, full_snapshot(conditions=None))
    body = (await client.get(url("conditions"), headers=keys.live)).json()
    assert body["observed"] is False
    assert body["summary"] == {"total": 0, "required": 0, "met": 0}
    assert body["groups"] == []
    assert body["items"] == []


async def test_history(client: httpx.AsyncClient, ctx: AppContext) -> None:
    keys = await keys_for(ctx)
    await store(ctx, full_snapshot())
    body = (await client.get(url("history"), headers=keys.live)).json()
    assert body["timeline"] == [
        {"status": "Submitted", "changed_at": "2026-03-02", "is_correction": False},
        {
            "status": "Corrections Issued",
            "changed_at": "2026-05-01T17:30:00Z",
            "is_correction": True,
            "discipline": "Building",
            "actor": "Plan checker",
            "comment": "Provide structural calcs",
        },
        {"status": "Issued", "changed_at": "2026-09-30", "is_correction": False},
    ]
    assert body["workflow"] == [
        {"name": "Plan Check", "status": "Completed", "completed_at": "2026-09-01"},
        {"name": "Final Inspection", "status": "Pending", "completed_at": None},
    ]


async def test_history_that_could_not_be_had_says_so_and_why(
    client: httpx.AsyncClient, ctx: AppContext
) -> None:
    keys = await keys_for(ctx)
    why = "the Processing Status request failed: GetProcessingData did not answer JSON"
    await store(
        ctx,
        full_snapshot(timeline=None, workflow=None, unavailable={"timeline": why, "workflow": why}),
    )
    body = (await client.get(url("history"), headers=keys.live)).json()
    assert body["observed"] is False
    assert body["unavailable_reason"] == why
    assert body["timeline"] == []


async def test_without_a_prior_status_lookup(client: httpx.AsyncClient, ctx: AppContext) -> None:
    keys = await keys_for(ctx)
    for kind in ("conditions", "inspections", "history"):
        response = await client.get(url(kind, jurisdiction="ladbs"), headers=keys.live)
        body = assert_problem(response, 404, "permit_not_found")
        assert body["status_url"] == f"/api/v1/permits/{LADBS_NUMBER}/status?jurisdiction=ladbs"
    # Nothing was read, so nothing is charged.
    assert await lookup_credits_used(ctx, keys.principal) == 0


async def test_shared_format(client: httpx.AsyncClient, ctx: AppContext) -> None:
    keys = await keys_for(ctx)
    ambiguous = await client.get(url("inspections", SHARED), headers=keys.live)
    body = assert_problem(ambiguous, 300, "multiple_jurisdictions")
    first = body["candidates"][0]  # type: ignore[index]
    assert body["example"] == url("inspections", SHARED, first["slug"])
    await store(ctx, full_snapshot(jurisdiction="aca:sandiego", permit_number=SHARED))
    # Looked up once with a jurisdiction: later calls need none.
    found = await client.get(url("inspections", SHARED), headers=keys.live)
    assert found.status_code == 200, found.text
    assert found.json()["jurisdiction"] == "aca:sandiego"


@pytest.mark.parametrize(
    ("target", "status", "code", "charged"),
    [
        (url("history"), 200, None, 1),
        (url("history", SHARED), 300, "multiple_jurisdictions", 1),
        (url("history", "ZZZ"), 404, "jurisdiction_not_supported", 1),  # as on GET status
        (url("history", "99999-99999-99999"), 404, "permit_not_found", 0),
        (url("history", jurisdiction="nowhere"), 400, "invalid_jurisdiction", 0),
        (url("history", "ABC-1", "ladbs"), 400, "invalid_permit_number", 0),
        (url("history") + "?jurisdiction=" + "x" * 65, 400, "invalid_parameter", 0),
    ],
)
async def test_meter_movement(
    client: httpx.AsyncClient,
    ctx: AppContext,
    target: str,
    status: int,
    code: str | None,
    charged: int,
) -> None:
    keys = await keys_for(ctx)
    await store(ctx, full_snapshot())
    response = await client.get(target, headers=keys.live)
    if code is None:
        assert response.status_code == status, response.text
    else:
        assert_problem(response, status, code)
    assert await lookup_credits_used(ctx, keys.principal) == charged
    if charged:
        assert response.headers["x-ratelimit-remaining"] == str(25_000 - charged)


@pytest.mark.parametrize("kind", ["inspections", "history", "conditions"])
async def test_sandbox_keys_get_404(client: httpx.AsyncClient, ctx: AppContext, kind: str) -> None:
    keys = await keys_for(ctx)
    await store(ctx, full_snapshot())
    response = await client.get(url(kind, jurisdiction="ladbs"), headers=keys.sandbox)
    assert_problem(response, 404, "sandbox_not_supported")
    assert response.headers["x-sandbox-mode"] == "true"


async def test_monthly_limit_refuses_before_reading(
    client: httpx.AsyncClient, ctx: AppContext
) -> None:
    keys = await keys_for(ctx, "free")
    await store(ctx, full_snapshot())
    from permitapi.account.plans import Meter
    from permitapi.usage import service as usage

    async with ctx.transaction() as session:
        await usage.reserve(session, keys.principal, Meter.LOOKUP, 200, ctx.clock.now())
    response = await client.get(url("history"), headers=keys.live)
    assert_problem(response, 429, "rate_limit_exceeded")
    assert await lookup_credits_used(ctx, keys.principal) == 200
