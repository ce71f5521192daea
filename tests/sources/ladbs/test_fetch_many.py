"""Batch fetches: `LadbsAdapter.fetch_many` equals `fetch_permit` permit by permit, with the
Socrata reads shared (one gwh9-jnip and at most one 9w5z-rg2h query per batch)."""

from __future__ import annotations

import random

import pytest

from permitapi.sources.base import NotFoundAtSource, PermitSnapshot, PortalChanged, RetryLater
from tests.sources.ladbs.conftest import LadbsSim


async def test_batch_equals_single_fetches_with_two_socrata_queries(sim: LadbsSim) -> None:
    chosen = [p.permit_number for p in random.Random(7).sample(sim.store.of("ladbs"), 25)]
    singles = {n: await sim.adapter.fetch_permit(sim.jurisdiction, n) for n in chosen}
    sim.store.requests.clear()
    batch = await sim.adapter.fetch_many(sim.jurisdiction, [*chosen, "not a number"])
    assert batch.pop("not a number").__class__ is NotFoundAtSource
    assert batch == singles  # every field, provenance URLs included
    # 25 pages plus gwh9-jnip once and 9w5z-rg2h at most once, instead of one each per permit
    assert 26 <= sim.store.requests["ladbs"] <= 27


async def test_unknown_permit_fails_alone(sim: LadbsSim) -> None:
    known = sim.store.of("ladbs")[0].permit_number
    batch = await sim.adapter.fetch_many(sim.jurisdiction, [known, "99999-99999-99999"])
    assert isinstance(batch[known], PermitSnapshot)
    assert isinstance(batch["99999-99999-99999"], NotFoundAtSource)


async def test_socrata_outage_leaves_enrichment_not_observed(
    sim: LadbsSim, monkeypatch: pytest.MonkeyPatch
) -> None:
    building = [p for p in sim.store.of("ladbs") if p.valuation is not None][:3]

    async def socrata_down(*_args: object) -> None:
        raise RetryLater("ladbs", "HTTP 503", reason="down")

    monkeypatch.setattr(sim.adapter, "_permit_rows", socrata_down)
    monkeypatch.setattr(sim.adapter, "_inspections_many", socrata_down)
    batch = await sim.adapter.fetch_many(sim.jurisdiction, [p.permit_number for p in building])
    for permit in building:
        got = batch[permit.permit_number]
        assert isinstance(got, PermitSnapshot), got
        assert got.raw_status == permit.raw_status
        assert got.valuation is None
        assert "valuation" not in got.field_sources


async def test_socrata_parse_failure_fails_the_building_permits(
    sim: LadbsSim, monkeypatch: pytest.MonkeyPatch
) -> None:
    building = [p for p in sim.store.of("ladbs") if p.valuation is not None][:2]

    async def socrata_changed(*_args: object) -> None:
        raise PortalChanged("ladbs", "Socrata answer is not a JSON array")

    monkeypatch.setattr(sim.adapter, "_permit_rows", socrata_changed)
    batch = await sim.adapter.fetch_many(sim.jurisdiction, [p.permit_number for p in building])
    assert all(isinstance(batch[p.permit_number], PortalChanged) for p in building)
