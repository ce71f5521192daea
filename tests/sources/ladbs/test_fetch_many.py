"""Batch fetches: `LadbsAdapter.fetch_many` equals `fetch_permit` permit by permit, with the
Socrata reads shared (one gwh9-jnip and one speculative 9w5z-rg2h query per batch)."""

from __future__ import annotations

import gc
import logging
import random

import pytest

from permitapi.sources.base import (
    NotFoundAtSource,
    PermitSnapshot,
    PortalChanged,
    RetryLater,
    SourceError,
)
from permitapi.sources.ladbs import adapter
from tests.sources.ladbs.conftest import LadbsSim


async def _singles(sim: LadbsSim, numbers: list[str]) -> tuple[dict[str, PermitSnapshot], set[str]]:
    """`fetch_permit` of each number, and the numbers whose fetch read 9w5z-rg2h."""
    singles: dict[str, PermitSnapshot] = {}
    needing: set[str] = set()
    for number in numbers:
        sim.timed.served.clear()
        singles[number] = await sim.adapter.fetch_permit(sim.jurisdiction, number)
        if "9w5z-rg2h" in sim.timed.names():
            needing.add(number)
    sim.timed.served.clear()
    return singles, needing


def _chosen(sim: LadbsSim) -> list[str]:
    return [p.permit_number for p in random.Random(7).sample(sim.store.of("ladbs"), 25)]


async def test_batch_equals_single_fetches_with_two_socrata_queries(sim: LadbsSim) -> None:
    chosen = _chosen(sim)
    singles, needing = await _singles(sim, chosen)
    assert 0 < len(needing) < len(chosen)  # the speculative read serves some permits, not all
    batch = await sim.adapter.fetch_many(sim.jurisdiction, [*chosen, "not a number"])
    assert batch.pop("not a number").__class__ is NotFoundAtSource
    assert batch == singles  # every field, provenance URLs included
    # 25 pages plus gwh9-jnip and 9w5z-rg2h once each, instead of one each per permit
    assert sorted(set(sim.timed.names())) == ["9w5z-rg2h", "PcisPermitDetail", "gwh9-jnip"]
    assert len(sim.timed.served) == 27


async def test_a_cut_shared_read_falls_back_to_the_permits_that_need_it(
    sim: LadbsSim, monkeypatch: pytest.MonkeyPatch
) -> None:
    chosen = _chosen(sim)
    singles, needing = await _singles(sim, chosen)
    monkeypatch.setattr(adapter, "SOCRATA_MAX_LIMIT", 1)  # every shared answer fills its $limit
    batch = await sim.adapter.fetch_many(sim.jurisdiction, chosen)
    assert batch == singles
    assert sim.timed.names().count("9w5z-rg2h") == 1 + len(needing)


@pytest.mark.parametrize(
    "failure",
    [RetryLater("ladbs", "HTTP 503", reason="down"), PortalChanged("ladbs", "not JSON")],
)
async def test_an_unneeded_shared_read_cannot_fail_the_batch(
    sim: LadbsSim,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
    failure: SourceError,
) -> None:
    chosen = _chosen(sim)
    singles, needing = await _singles(sim, chosen)
    no_history_read = [n for n in chosen if n not in needing]

    async def shared_read_fails(*_args: object) -> None:
        raise failure

    monkeypatch.setattr(sim.adapter, "_inspections_shared", shared_read_fails)
    batch = await sim.adapter.fetch_many(sim.jurisdiction, no_history_read)
    assert batch == {n: singles[n] for n in no_history_read}
    gc.collect()  # an unretrieved task exception is reported when the task is collected
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR]


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
    monkeypatch.setattr(sim.adapter, "_inspections_shared", socrata_down)
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
