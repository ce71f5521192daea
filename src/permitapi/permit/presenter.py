"""The permit status record and its `data_freshness`, built from a stored row.

`status_phase` condenses the normalised status into five phases (docs/decisions.md):

    pending     application_received, in_review, applicant_action, approved_pending_issue,
                on_hold, appeal — not yet issued
    active      issued, inspections — issued, work under way
    closed      finaled, finaled_conditional, occupancy — work completed and signed off
    terminated  expired, cancelled — ended without completion
    unknown     the portal's status is not in our mapping table (never guessed)
"""

from __future__ import annotations

import re
from datetime import datetime, timedelta
from typing import Any, Literal

from permitapi.account.plans import CACHE_LIFETIME
from permitapi.kit.clock import isoformat_z
from permitapi.permit.repository import CachedPermit
from permitapi.sources.base import NormalizedStatus
from permitapi.sources.registry import Directory

Source = Literal["cached", "live_scrape", "stale_cache"]
# After a failed refresh, ordinary lookups answer from the stale copy for this long before
# trying the portal again, so a down portal is not hit by every request.
FAILED_REFRESH_BACKOFF = timedelta(seconds=60)

_PHASES: dict[str, str] = {
    NormalizedStatus.APPLICATION_RECEIVED: "pending",
    NormalizedStatus.IN_REVIEW: "pending",
    NormalizedStatus.APPLICANT_ACTION: "pending",
    NormalizedStatus.APPROVED_PENDING_ISSUE: "pending",
    NormalizedStatus.ON_HOLD: "pending",
    NormalizedStatus.APPEAL: "pending",
    NormalizedStatus.ISSUED: "active",
    NormalizedStatus.INSPECTIONS: "active",
    NormalizedStatus.FINALED: "closed",
    NormalizedStatus.FINALED_CONDITIONAL: "closed",
    NormalizedStatus.OCCUPANCY: "closed",
    NormalizedStatus.EXPIRED: "terminated",
    NormalizedStatus.CANCELLED: "terminated",
    NormalizedStatus.UNKNOWN: "unknown",
}
STATUS_PHASES = ("pending", "active", "closed", "terminated", "unknown")


def status_phase(normalized: str | None) -> str:
    return _PHASES.get(normalized or "", "unknown")


def display_status(raw: str | None) -> str:
    """The portal's status text with its whitespace tidied; `portal_status` keeps it raw."""
    return re.sub(r"\s+", " ", (raw or "").replace("\xa0", " ")).strip()


def is_fresh(row: CachedPermit, now: datetime) -> bool:
    return row.fetched_at is not None and now - row.fetched_at < CACHE_LIFETIME


def in_failure_backoff(row: CachedPermit, now: datetime) -> bool:
    return (
        row.last_failure_reason is not None
        and row.last_failure_reason != "not_found"
        and row.last_attempted_at is not None
        and now - row.last_attempted_at < FAILED_REFRESH_BACKOFF
    )


def freshness(
    row: CachedPermit,
    *,
    source: Source,
    now: datetime,
    refresh_available: bool,
    stale_reason: str | None = None,
) -> dict[str, Any]:
    assert row.fetched_at is not None
    fetched_at = row.fetched_at
    attempted = row.last_attempted_at or fetched_at
    if source == "stale_cache":
        # The next ordinary lookup retries the portal once the failure backoff is over.
        next_refresh = max(attempted + FAILED_REFRESH_BACKOFF, now)
    else:
        next_refresh = fetched_at + CACHE_LIFETIME
    return {
        "age_seconds": max(0, int((now - fetched_at).total_seconds())),
        "cached": source != "live_scrape",
        "refresh_available": refresh_available,
        "fetched_at": isoformat_z(fetched_at),
        "last_successful_fetch_at": isoformat_z(fetched_at),
        "last_attempted_fetch_at": isoformat_z(max(attempted, fetched_at)),
        "is_stale": source == "stale_cache",
        "stale_reason": stale_reason if source == "stale_cache" else None,
        "next_refresh_at": isoformat_z(next_refresh),
    }


def status_record(
    row: CachedPermit,
    directory: Directory,
    *,
    source: Source,
    now: datetime,
    refresh_available: bool,
    stale_reason: str | None = None,
) -> dict[str, Any]:
    """The permit status record of the contract (GET status 200, batch results, op results)."""
    assert row.fetched_at is not None
    jurisdiction = directory.get(row.jurisdiction)
    return {
        "permit_number": row.display_number,
        "permit_id": row.permit_id,
        "jurisdiction": row.jurisdiction,
        "jurisdiction_display": jurisdiction.display_name if jurisdiction else row.jurisdiction,
        "status": display_status(row.raw_status),
        "portal_status": row.raw_status or "",
        "status_phase": status_phase(row.normalized_status),
        "permit_type": row.permit_type,
        "address": row.address,
        "work_description": row.work_description,
        "source": source,
        "last_synced_at": isoformat_z(row.fetched_at),
        "data_freshness": freshness(
            row,
            source=source,
            now=now,
            refresh_available=refresh_available,
            stale_reason=stale_reason,
        ),
    }
