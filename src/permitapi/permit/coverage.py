"""Coverage observations: which fields each successful lookup found.

Only the jurisdiction, the time and a field -> present map are stored: never a permit number,
permit id or anything about the customer, so the coverage endpoint cannot leak either.
"""

from __future__ import annotations

from datetime import datetime

from sqlalchemy.ext.asyncio import AsyncSession

from permitapi.permit import coverage_repository
from permitapi.sources.base import PermitSnapshot

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
    await coverage_repository.insert(
        session, snapshot.jurisdiction, fields_present(snapshot), observed_at
    )
