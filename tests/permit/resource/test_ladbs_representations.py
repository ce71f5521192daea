"""Real adapter output, stored as a status lookup stores it, read back through the resource and
detail endpoints. (Part A's lookup path is not on main yet: once it is, these become lookups.)"""

from __future__ import annotations

import random

import httpx

from permitapi.context import AppContext
from permitapi.permit.resource.inspection_results import pass_rate
from tests.permit.helpers import keys_for
from tests.sources.ladbs.conftest import LadbsSim, sim  # noqa: F401  (fixture)
from tests.support.permits import store


async def test_adapter_snapshots_read_back(
    client: httpx.AsyncClient,
    ctx: AppContext,
    sim: LadbsSim,  # noqa: F811
) -> None:
    keys = await keys_for(ctx)
    chosen = random.Random(7).sample(sim.store.of("ladbs"), 12)
    for truth in chosen:
        snapshot = await sim.adapter.fetch_permit(sim.jurisdiction, truth.permit_number)
        permit_id = await store(ctx, snapshot)
        spaced = snapshot.permit_number.replace("-", " ")
        resolution = await client.post(
            "/api/v1/permit-resolutions", json={"permit_number": spaced}, headers=keys.live
        )
        assert resolution.json()["permit_id"] == permit_id
        assert resolution.json()["resource_available"] is True

        body = (await client.get(f"/api/v1/permits/{permit_id}", headers=keys.live)).json()
        assert body["status"]["raw_value"] == snapshot.raw_status
        assert body["status"]["value"] == snapshot.status.value
        assert body["status"]["provenance"]["source_url"] == snapshot.source_url
        valuation = body["valuation"]
        if snapshot.valuation is None:
            assert valuation["provenance"]["availability"] == "not_observed"
        else:
            assert valuation["value"] == snapshot.valuation
            assert valuation["provenance"]["source_url"] == snapshot.field_sources["valuation"]

        inspections = await client.get(f"/api/v1/permits/{spaced}/inspections", headers=keys.live)
        assert inspections.status_code == 200, inspections.text
        done = snapshot.inspections or []
        assert len(inspections.json()["inspections"]) == len(done)
        expected_rate = pass_rate([i.result for i in done], "ladbs")
        assert inspections.json()["pass_rate"] == expected_rate

        history = (await client.get(f"/api/v1/permits/{spaced}/history", headers=keys.live)).json()
        assert len(history["timeline"]) == len(snapshot.timeline or [])
        assert history["workflow"] == []  # PCIS publishes no workflow tasks
        conditions = (
            await client.get(f"/api/v1/permits/{spaced}/conditions", headers=keys.live)
        ).json()
        assert conditions["observed"] is (snapshot.conditions is not None)
        assert conditions["summary"]["total"] == len(snapshot.conditions or [])
