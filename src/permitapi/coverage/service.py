"""Coverage observations: which fields each successful lookup found.

Only the jurisdiction, the time and a field -> present map are stored: never a permit number,
permit id or anything about the customer, so the coverage endpoint cannot leak either.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession

from permitapi.account.plans import COVERAGE_SAMPLE_WINDOW
from permitapi.coverage import repository as coverage_repository
from permitapi.kit.clock import isoformat_z
from permitapi.sources.base import PermitSnapshot
from permitapi.sources.registry import Directory

RELIABLE_PERCENT = 80

COVERAGE_FIELDS = (
    "status",
    "status_date",
    "permit_type",
    "address",
    "work_description",
    "applied_date",
    "issued_date",
    "finaled_date",
    "expires_date",
    "valuation",
    "parcel",
    "coordinates",
    "inspections",
    "pending_inspections",
    "conditions",
    "timeline",
    "workflow",
)


def fields_present(snapshot: PermitSnapshot) -> dict[str, bool]:
    """Present means observed with a value; an observed-but-empty list counts as present."""
    present = {
        "status": bool(snapshot.raw_status),
        "coordinates": snapshot.latitude is not None and snapshot.longitude is not None,
    }
    for name in COVERAGE_FIELDS:
        if name not in present:
            value = getattr(snapshot, name)
            present[name] = value is not None and value != ""
    return present


async def record_observation(
    session: AsyncSession, snapshot: PermitSnapshot, observed_at: datetime
) -> None:
    await record_observations(session, [snapshot], observed_at)


async def record_observations(
    session: AsyncSession, snapshots: Sequence[PermitSnapshot], observed_at: datetime
) -> None:
    """One observation per successful lookup, all in one statement."""
    await coverage_repository.insert_many(
        session, [(s.jurisdiction, fields_present(s)) for s in snapshots], observed_at
    )


def tier(present: int, sample: int) -> str:
    """reliable >= 80 %, partial (0, 80), missing (sampled, never present), unknown (no sample).

    Compared on counts, not on a rounded rate, so 80 % exactly is reliable.
    """
    if sample == 0:
        return "unknown"
    if present == 0:
        return "missing"
    return "reliable" if present * 100 >= sample * RELIABLE_PERCENT else "partial"


def _field_coverage(counts: coverage_repository.WindowCounts | None) -> list[dict[str, Any]]:
    items = []
    for name in COVERAGE_FIELDS:
        sample = counts.sampled[name] if counts else 0
        present = counts.present[name] if counts else 0
        items.append(
            {
                "field": name,
                "tier": tier(present, sample),
                "fill_rate": round(present / sample, 4) if sample else None,
                "records_present": present,
                "sample_size": sample,
            }
        )
    return items


async def coverage_report(
    session: AsyncSession, directory: Directory, now: datetime
) -> dict[str, Any]:
    """Capabilities, field coverage and data release of every jurisdiction, over the rolling
    sample window ending `now`. Built from observations only: it holds no permit or customer
    identifier because the observations hold none.
    """
    counts = await coverage_repository.window_counts(
        session, now - COVERAGE_SAMPLE_WINDOW, now, COVERAGE_FIELDS
    )
    by_slug = {c.jurisdiction: c for c in counts}
    jurisdictions = []
    for jurisdiction in directory:
        found = by_slug.get(jurisdiction.slug)
        jurisdictions.append(
            {
                "slug": jurisdiction.slug,
                "display_name": jurisdiction.display_name,
                "capabilities": dict(jurisdiction.capabilities),
                "field_coverage": _field_coverage(found),
                "data_release": {
                    "mode": "continuous",
                    "sample_size": found.observations if found else 0,
                    "observed_from": isoformat_z(found.first_at) if found else None,
                    "observed_through": isoformat_z(found.last_at) if found else None,
                },
            }
        )
    return {
        "sample_window_days": COVERAGE_SAMPLE_WINDOW.days,
        "jurisdictions": jurisdictions,
    }
