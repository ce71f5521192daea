"""100 simulator permits through the real adapter equal the simulator's ground truth."""

from __future__ import annotations

import dataclasses
import random
import re
from collections import Counter

from permitapi.portalsim.ladbs_data import quirks
from permitapi.sources.base import NormalizedStatus, PermitSnapshot
from permitapi.sources.ladbs.status import LADBS_STATUSES
from tests.sources.ladbs.conftest import LadbsSim

# Provenance differs by construction (truth has none); everything else must match exactly.
EXCLUDED = {"field_sources", "source_url"}


def _fields(snapshot: PermitSnapshot) -> dict[str, object]:
    return {
        f.name: getattr(snapshot, f.name)
        for f in dataclasses.fields(snapshot)
        if f.name not in EXCLUDED
    }


async def test_hundred_random_permits_round_trip(sim: LadbsSim) -> None:
    truth = sim.store.of("ladbs")
    chosen = random.Random(3).sample(truth, 100)
    odd = Counter()
    for permit in chosen:
        q = quirks(permit.permit_number)
        odd["legacy with Socrata-only inspections"] += q.legacy and bool(permit.inspections)
        odd["status without date"] += q.status_without_date
        odd["nbsp labels"] += q.nbsp_labels
        odd["trade permit outside gwh9"] += permit.applied_date is None
    assert min(odd.values()) >= 3, odd  # the sample really exercises the odd cases
    for expected in chosen:
        got = await sim.adapter.fetch_permit(sim.jurisdiction, expected.permit_number)
        want, have = _fields(expected), _fields(got)
        diff = {k: (want[k], have[k]) for k in want if want[k] != have[k]}
        assert not diff, f"{expected.permit_number} ({expected.raw_status}): {diff}"
        assert got.source_url is not None
        assert got.source_url.startswith(
            "https://www.ladbsservices2.lacity.org/OnlineServices/PermitReport/PcisPermitDetail?id1="
        )
        assert got.field_sources["raw_status"] == got.source_url
        if got.valuation is not None:
            assert got.field_sources["valuation"].startswith(
                "https://data.lacity.org/resource/gwh9-jnip.json?permit_nbr="
            )


def test_generated_data_covers_the_vocabulary_and_the_odd_cases(sim: LadbsSim) -> None:
    truth = sim.store.of("ladbs")
    assert {p.raw_status for p in truth} == set(LADBS_STATUSES)
    assert all(p.status is not NormalizedStatus.UNKNOWN for p in truth)
    flags = Counter()
    for p in truth:
        q = quirks(p.permit_number)
        flags.update(
            {"legacy": q.legacy, "nodate": q.status_without_date, "nbsp": q.nbsp_labels,
             "plain": q.plain_status_date}
        )  # fmt: skip
        assert re.fullmatch(r"\d{5}-\d{5}-\d{5}", p.permit_number)
        if p.issued_date is None:
            assert p.inspections == []
        if p.parcel is not None:
            assert len(p.parcel) == 10
            assert p.parcel.isdigit()
    assert min(flags.values()) >= 5
    assert {p.permit_type for p in truth} >= {
        "Bldg-New", "Bldg-Alter/Repair", "Bldg-Addition", "Electrical", "Plumbing", "HVAC",
        "Grading",
    }  # fmt: skip
    assert {int(p.permit_number[:2]) for p in truth} >= set(range(19, 27))
    assert any(len(p.inspections or []) > 3 for p in truth)
    assert any(p.pending_inspections for p in truth)
    assert any(p.conditions for p in truth)
