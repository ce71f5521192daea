"""Discovery criteria -> the SoQL `$where` sent to gwh9-jnip (research/portals.md §1.4)."""

from __future__ import annotations

from permitapi.sources.base import NormalizedStatus, SearchCriteria
from permitapi.sources.ladbs.socrata import (
    METRES_PER_MILE,
    date_range_clauses,
    in_list,
    soql_number,
    soql_string,
)
from permitapi.sources.ladbs.status import LADBS_STATUSES
from permitapi.sources.status import status_key

# permit_group values; a criteria type equal to one of these filters the group, not the type
PERMIT_GROUPS = ("Building", "Electrical", "Plumbing", "Mechanical", "Fire Sprinkler", "Elevator")
PERMIT_TYPES = (
    "Bldg-New", "Bldg-Alter/Repair", "Bldg-Addition", "Bldg-Demolition", "Grading", "Sign",
    "Swimming-Pool/Spa", "Nonbldg-New", "Nonbldg-Alter/Repair", "Nonbldg-Addition",
    "Nonbldg-Demolition", "Electrical", "Plumbing", "HVAC", "Fire Sprinkler", "Elevator",
)  # fmt: skip


def _canonical(value: str, known: tuple[str, ...]) -> str | None:
    key = status_key(value)
    return next((k for k in known if status_key(k) == key), None)


def type_clause(permit_type: str) -> str:
    group = _canonical(permit_type, PERMIT_GROUPS)
    if group is not None and _canonical(permit_type, PERMIT_TYPES) is None:
        return f"permit_group={soql_string(group)}"
    return f"permit_type={soql_string(_canonical(permit_type, PERMIT_TYPES) or permit_type)}"


def status_clause(status: str) -> str:
    """A normalised status in its exact spelling (`issued`) selects every raw value mapped to
    it; anything else (`Issued`, `permit finaled`) is matched as a raw `status_desc`,
    case-canonicalised against the known vocabulary. The same rule as EPIC-LA's, so one
    discovery `status` means the same on both sources."""
    try:
        normalized = NormalizedStatus(status.strip())
    except ValueError:
        raw = _canonical(status, tuple(LADBS_STATUSES)) or status.strip()
        return f"status_desc={soql_string(raw)}"
    if normalized is NormalizedStatus.INSPECTIONS:  # not a raw LADBS status: issued + inspections
        normalized = NormalizedStatus.ISSUED
    raws = [raw for raw, mapped in LADBS_STATUSES.items() if mapped is normalized]
    return in_list("status_desc", raws) if raws else f"status_desc={soql_string(status.strip())}"


def search_where(criteria: SearchCriteria) -> str:
    clauses: list[str] = []
    if criteria.parcels:
        apns = [p.replace("-", "").replace(" ", "") for p in criteria.parcels]
        clauses.append(in_list("apn", apns))
    if criteria.zip:
        clauses.append(f"zip_code={soql_string(criteria.zip.strip()[:5])}")
    if (
        criteria.latitude is not None
        and criteria.longitude is not None
        and criteria.radius_mi is not None
    ):
        metres = criteria.radius_mi * METRES_PER_MILE
        clauses.append(
            f"within_circle(geolocation, {soql_number(criteria.latitude)}, "
            f"{soql_number(criteria.longitude)}, {soql_number(round(metres, 1))})"
        )
    if criteria.permit_type:
        clauses.append(type_clause(criteria.permit_type))
    clauses.extend(date_range_clauses("issue_date", criteria.date_from, criteria.date_to))
    # valuation is text on Socrata: compare it as a number, never lexically
    if criteria.value_min is not None:
        clauses.append(f"valuation::number >= {soql_number(criteria.value_min)}")
    if criteria.value_max is not None:
        clauses.append(f"valuation::number <= {soql_number(criteria.value_max)}")
    if criteria.status:
        clauses.append(status_clause(criteria.status))
    return " AND ".join(f"({c})" if " OR " in c else c for c in clauses)
