"""The simulated LADBS data set publishes like the real one: issuances on every recent day."""

from __future__ import annotations

import random
from datetime import date, timedelta

import pytest

from permitapi.portalsim.ladbs_data import RECENT_ISSUE_DAYS, generate_permits, group_of
from permitapi.sources.ladbs.adapter import LAG_DEGRADED_DAYS
from permitapi.sources.registry import load_directory


@pytest.mark.parametrize("offset", range(0, 60, 3))
def test_the_newest_building_issue_date_is_recent_whatever_the_start_day(offset: int) -> None:
    ladbs = load_directory().get("ladbs")
    assert ladbs is not None
    today = date(2026, 11, 24) - timedelta(days=offset)
    permits = generate_permits(ladbs, random.Random(7), 3000, today)
    issued = sorted(
        {
            p.issued_date
            for p in permits
            if p.issued_date is not None and group_of(p.permit_type or "") == "Building"
        }
    )
    assert issued[-1] >= today - timedelta(days=1)
    recent = [today - timedelta(days=d) for d in range(1, RECENT_ISSUE_DAYS + 1)]
    assert set(recent) <= set(issued)
    assert (today - issued[-1]).days <= LAG_DEGRADED_DAYS
    assert len({p.permit_number for p in permits}) == len(permits)


def test_recent_permits_keep_a_consistent_history() -> None:
    ladbs = load_directory().get("ladbs")
    assert ladbs is not None
    today = date(2026, 11, 24)
    permits = generate_permits(ladbs, random.Random(3), 500, today)
    for permit in permits[-RECENT_ISSUE_DAYS:]:
        assert permit.raw_status == "Issued"
        assert permit.issued_date is not None
        assert permit.issued_date < today
        assert permit.applied_date is not None
        assert permit.applied_date < permit.issued_date
        assert all(i.date is None or i.date >= permit.issued_date for i in permit.inspections)
