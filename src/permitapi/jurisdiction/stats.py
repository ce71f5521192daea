"""Jurisdiction stats and analytics: figures over the permits this service has observed.

Data source: the `permits` table, i.e. the latest successful representation of every permit
looked up (or refreshed) through the service. The figures describe what the service has seen,
not the agency's whole book; they grow as permits are looked up.

- active: the normalised status is one of ACTIVE_STATUSES (in the pipeline or issued and not yet
  finaled, expired or cancelled). `unknown` is not counted: an unmapped status is not evidence.
- date_range: earliest and latest application or issue date among the stored permits.
- median_processing_days: median of (issued_date - applied_date) in days over permits with both
  dates and issued on or after applied (a negative interval is a data-entry error and left out),
  rounded half up; null below MIN_PROCESSING_SAMPLE intervals. sample_size is that count.
"""

from __future__ import annotations

import statistics
from collections.abc import Mapping
from datetime import date
from decimal import ROUND_HALF_UP, Decimal
from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession

from permitapi.errors import NotFound
from permitapi.jurisdiction import stats_repository as repository
from permitapi.sources.base import NormalizedStatus
from permitapi.sources.registry import Directory, Jurisdiction

ACTIVE_STATUSES = frozenset(
    {
        NormalizedStatus.APPLICATION_RECEIVED,
        NormalizedStatus.IN_REVIEW,
        NormalizedStatus.APPLICANT_ACTION,
        NormalizedStatus.APPROVED_PENDING_ISSUE,
        NormalizedStatus.ON_HOLD,
        NormalizedStatus.ISSUED,
        NormalizedStatus.INSPECTIONS,
        NormalizedStatus.APPEAL,
    }
)
# Below five intervals a median says more about one permit than about the jurisdiction.
MIN_PROCESSING_SAMPLE = 5
UNTYPED = "Unspecified"


def known_jurisdiction(directory: Directory, slug: str) -> Jurisdiction:
    jurisdiction = directory.get(slug)
    if jurisdiction is None:
        raise NotFound(
            f"No jurisdiction '{slug}'. GET /api/v1/jurisdictions lists the slugs.",
            code="jurisdiction_not_found",
            extra={"slug": slug},
        )
    return jurisdiction


async def active_permits_counts(session: AsyncSession) -> Mapping[str, int]:
    """Active permits per slug; a slug missing from the map has none. Every count the API
    shows (directory listing, stats) comes from here."""
    return await repository.active_counts(session, [s.value for s in ACTIVE_STATUSES])


def _date_range(bounds: repository.DateBounds) -> dict[str, date | None]:
    earliest = [d for d in (bounds.earliest_applied, bounds.earliest_issued) if d is not None]
    latest = [d for d in (bounds.latest_applied, bounds.latest_issued) if d is not None]
    return {"earliest": min(earliest, default=None), "latest": max(latest, default=None)}


def median_days(intervals: list[tuple[date, date]]) -> tuple[int | None, int]:
    days = [(issued - applied).days for applied, issued in intervals if issued >= applied]
    if len(days) < MIN_PROCESSING_SAMPLE:
        return None, len(days)
    middle = Decimal(str(statistics.median(days)))
    return int(middle.quantize(Decimal(1), rounding=ROUND_HALF_UP)), len(days)


async def jurisdiction_stats(
    session: AsyncSession, directory: Directory, slug: str
) -> dict[str, Any]:
    """GET /jurisdictions/{slug}/stats; 404 jurisdiction_not_found for an unknown slug."""
    jurisdiction = known_jurisdiction(directory, slug)
    counts = await repository.active_counts(
        session, [s.value for s in ACTIVE_STATUSES], jurisdiction.slug
    )
    return {
        "slug": jurisdiction.slug,
        "display_name": jurisdiction.display_name,
        "active_permits_count": counts.get(jurisdiction.slug, 0),
        "date_range": _date_range(await repository.date_bounds(session, jurisdiction.slug)),
    }


async def jurisdiction_analytics(
    session: AsyncSession, directory: Directory, slug: str
) -> dict[str, Any]:
    """GET /jurisdictions/{slug}/analytics; 404 jurisdiction_not_found for an unknown slug."""
    jurisdiction = known_jurisdiction(directory, slug)
    by_type_raw = await repository.counts_by_type(session, jurisdiction.slug)
    by_type: dict[str, int] = {}
    for name, count in by_type_raw.items():
        key = name or UNTYPED
        by_type[key] = by_type.get(key, 0) + count
    median, sample = median_days(await repository.processing_intervals(session, jurisdiction.slug))
    return {
        "jurisdiction": jurisdiction.slug,
        "display_name": jurisdiction.display_name,
        "median_processing_days": median,
        "sample_size": sample,
        "permit_count": sum(by_type.values()),
        "permits_by_type": dict(sorted(by_type.items())),
        "date_range": _date_range(await repository.date_bounds(session, jurisdiction.slug)),
    }
