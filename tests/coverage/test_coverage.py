"""Coverage aggregation over the rolling 90-day window, and GET /jurisdictions/coverage."""

from __future__ import annotations

from datetime import timedelta

import httpx
import pytest

from permitapi.context import AppContext
from permitapi.coverage import repository as coverage_repository
from permitapi.coverage import service as coverage
from permitapi.kit.clock import FrozenClock
from tests.support.permits import LADBS_NUMBER, full_snapshot


@pytest.mark.parametrize(
    ("present", "sample", "expected"),
    [(0, 0, "unknown"), (0, 5, "missing"), (1, 5, "partial"), (79, 100, "partial"),
     (4, 5, "reliable"), (5, 5, "reliable")],
)  # fmt: skip
def test_tiers(present: int, sample: int, expected: str) -> None:
    assert coverage.tier(present, sample) == expected


async def _observe(ctx: AppContext, clock: FrozenClock) -> None:
    now = clock.now()
    snapshots = [full_snapshot(valuation=None) for _ in range(3)]
    snapshots.append(full_snapshot(address=None, valuation=None))
    snapshots.append(full_snapshot())
    async with ctx.transaction() as session:
        for offset, snapshot in enumerate(snapshots):
            await coverage.record_observation(session, snapshot, now - timedelta(days=offset))
        # Outside the window: must not count.
        await coverage.record_observation(
            session,
            full_snapshot(finaled_date=full_snapshot().issued_date),
            now - timedelta(days=91),
        )
        # An older observation that did not record `valuation` at all: not in its sample.
        await coverage_repository.insert(
            session, "ladbs", {"address": True}, now - timedelta(days=10)
        )


async def test_report_aggregates_the_window(ctx: AppContext, clock: FrozenClock) -> None:
    await _observe(ctx, clock)
    async with ctx.sessionmaker() as session:
        report = await coverage.coverage_report(session, ctx.directory, clock.now())
    assert report["sample_window_days"] == 90
    entries = {j["slug"]: j for j in report["jurisdictions"]}
    assert len(entries) == len(ctx.directory)
    ladbs = entries["ladbs"]
    fields = {f["field"]: f for f in ladbs["field_coverage"]}
    assert fields["address"] == {
        "field": "address",
        "tier": "reliable",
        "fill_rate": round(5 / 6, 4),
        "records_present": 5,
        "sample_size": 6,
    }
    assert fields["valuation"] == {
        "field": "valuation",
        "tier": "partial",
        "fill_rate": 0.2,
        "records_present": 1,
        "sample_size": 5,
    }
    assert fields["finaled_date"]["tier"] == "missing"
    assert fields["finaled_date"]["fill_rate"] == 0.0
    assert ladbs["data_release"] == {
        "mode": "continuous",
        "sample_size": 6,
        "observed_from": "2026-11-12T12:00:00Z",  # the 10-day-old legacy row
        "observed_through": "2026-11-22T12:00:00Z",
    }
    assert ladbs["capabilities"]["inspections"] == "available"
    epicla = entries["epicla"]
    assert {f["tier"] for f in epicla["field_coverage"]} == {"unknown"}
    assert {f["fill_rate"] for f in epicla["field_coverage"]} == {None}
    assert epicla["data_release"]["sample_size"] == 0
    assert epicla["data_release"]["observed_from"] is None


async def test_public_endpoint(
    client: httpx.AsyncClient, ctx: AppContext, clock: FrozenClock
) -> None:
    await _observe(ctx, clock)
    response = await client.get("/api/v1/jurisdictions/coverage")
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["sample_window_days"] == 90
    ladbs = next(j for j in body["jurisdictions"] if j["slug"] == "ladbs")
    assert set(ladbs["capabilities"]) == {
        "status_lookup", "inspections", "workflow_history", "discovery", "conditions",
    }  # fmt: skip
    assert ladbs["data_release"]["sample_size"] == 6
    # No permit identifier can leak: observations never held one.
    assert LADBS_NUMBER not in response.text
    assert "permit_id" not in response.text
