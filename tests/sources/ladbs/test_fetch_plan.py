"""The LADBS fetch plan in time: reads that do not depend on each other overlap, and reads
that turn out unneeded are stopped and collected (nothing left pending or unretrieved)."""

from __future__ import annotations

import asyncio
import gc
import logging

import pytest

from permitapi.sources.base import NotFoundAtSource, PermitSnapshot
from tests.sources.ladbs.conftest import LadbsSim, Served


def only(served: list[Served], name: str) -> Served:
    (found,) = [s for s in served if s.name == name]
    return found


async def test_page_and_gwh9_row_are_read_in_one_round_trip(slow_sim: LadbsSim) -> None:
    for permit in slow_sim.store.of("ladbs"):
        slow_sim.timed.served.clear()
        snapshot = await slow_sim.adapter.fetch_permit(slow_sim.jurisdiction, permit.permit_number)
        if snapshot.valuation is not None and "9w5z-rg2h" not in slow_sim.timed.names():
            break  # a Building permit whose page lists its inspections: page + row only
    else:
        pytest.fail("no Building permit without a 9w5z-rg2h read in the simulator")
    page = only(slow_sim.timed.served, "PcisPermitDetail")
    row = only(slow_sim.timed.served, "gwh9-jnip")
    # Overlapping, not one after the other: one round trip. (The overlap is the proof; a
    # wall-clock bound failed on a loaded machine while the reads still overlapped.)
    assert row.started < page.ended
    assert page.started < row.ended
    assert "valuation" in snapshot.field_sources


async def test_a_missing_permit_leaves_no_read_behind(
    slow_sim: LadbsSim, caplog: pytest.LogCaptureFixture
) -> None:
    with pytest.raises(NotFoundAtSource):
        await slow_sim.adapter.fetch_permit(slow_sim.jurisdiction, "99999-99999-99999")
    assert asyncio.all_tasks() == {asyncio.current_task()}
    gc.collect()
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR]


async def test_a_batch_sends_its_socrata_reads_with_the_pages(slow_sim: LadbsSim) -> None:
    numbers = [p.permit_number for p in slow_sim.store.of("ladbs")[:25]]
    batch = await slow_sim.adapter.fetch_many(slow_sim.jurisdiction, numbers)
    assert all(isinstance(batch[n], PermitSnapshot) for n in numbers)
    served = slow_sim.timed.served
    first_page_done = min(s.ended for s in served if s.name == "PcisPermitDetail")
    assert only(served, "gwh9-jnip").started < first_page_done
    assert only(served, "9w5z-rg2h").started < first_page_done  # speculative, not after pages
