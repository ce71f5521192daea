"""The permit status record and `data_freshness`, built from a stored row.

`freshness` is the one builder of `data_freshness`: the status record (GET status, batch,
operation results) and the stored reads (canonical resource, inspections, conditions, history)
all take theirs from it.

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
from typing import Any, Literal, Protocol

from permitapi.account.plans import CACHE_LIFETIME
from permitapi.kit.clock import isoformat_z
from permitapi.permit.lookup.refresh import NOT_FOUND
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


class Fetches(Protocol):
    """What `data_freshness` needs of a permits row: a `CachedPermit` or a `PermitRecord`."""

    @property
    def fetched_at(self) -> datetime | None: ...
    @property
    def last_attempted_at(self) -> datetime | None: ...
    @property
    def last_failure_reason(self) -> str | None: ...


def is_fresh(row: Fetches, now: datetime) -> bool:
    return row.fetched_at is not None and now - row.fetched_at < CACHE_LIFETIME


def last_refresh_failed(row: Fetches) -> bool:
    """The latest refresh attempt failed on the portal's side (a stale_reason is recorded); a
    portal-confirmed missing permit is not a failure."""
    return row.last_failure_reason is not None and row.last_failure_reason != NOT_FOUND


def in_failure_backoff(row: Fetches, now: datetime) -> bool:
    return (
        last_refresh_failed(row)
        and row.last_attempted_at is not None
        and now - row.last_attempted_at < FAILED_REFRESH_BACKOFF
    )


def freshness(
    row: Fetches,
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
        # Never in the past: a stored read of an expired copy is refreshed by the next lookup.
        next_refresh = max(fetched_at + CACHE_LIFETIME, now)
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


def stored_freshness(row: Fetches, *, now: datetime, refresh_available: bool) -> dict[str, Any]:
    """`data_freshness` of an answer read from the stored representation without asking the
    portal (canonical resource, inspections, conditions, history): what a status lookup would
    report at this moment if it answered from the store. `cached` is always true; `is_stale`
    when the copy has expired and the latest refresh attempt failed (its stale_reason)."""
    if not is_fresh(row, now) and last_refresh_failed(row):
        return freshness(
            row,
            source="stale_cache",
            now=now,
            refresh_available=refresh_available,
            stale_reason=row.last_failure_reason,
        )
    return freshness(row, source="cached", now=now, refresh_available=refresh_available)


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
