"""The contract between the service and the permit portals.

Every portal family (ladbs, epicla, aca) implements `SourceAdapter`. Adapters speak the
portals' real wire formats over `permitapi.sources.http`, never touch the database and return
plain snapshot values. Their failures are typed by what the caller should do:

    SourceError
    ├── RetryLater        transient: timeout, outage, maintenance page, throttling, open circuit
    ├── NotFoundAtSource  the portal itself confirmed that no such permit exists
    ├── PortalChanged     the page or payload no longer parses: a bug for us, never "not found"
    └── Blocked           a login wall, CAPTCHA or CSRF refusal stands between us and the data
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from datetime import date, datetime
from enum import StrEnum
from typing import Protocol

from permitapi.sources.registry import Jurisdiction


class NormalizedStatus(StrEnum):
    """BLDS-aligned status vocabulary (research/portals.md §4.2)."""

    APPLICATION_RECEIVED = "application_received"
    IN_REVIEW = "in_review"
    APPLICANT_ACTION = "applicant_action"
    APPROVED_PENDING_ISSUE = "approved_pending_issue"
    ON_HOLD = "on_hold"
    ISSUED = "issued"
    INSPECTIONS = "inspections"
    FINALED = "finaled"
    FINALED_CONDITIONAL = "finaled_conditional"
    OCCUPANCY = "occupancy"
    EXPIRED = "expired"
    CANCELLED = "cancelled"
    APPEAL = "appeal"
    UNKNOWN = "unknown"


@dataclass(frozen=True, slots=True)
class Inspection:
    """A completed (or cancelled) inspection as the portal lists it."""

    type: str
    date: date | None
    result: str | None
    inspector: str | None = None


@dataclass(frozen=True, slots=True)
class PendingInspection:
    type: str
    date: date | None


@dataclass(frozen=True, slots=True)
class Condition:
    """A condition, clearance or hold on the permit."""

    name: str
    status: str  # as published, e.g. "Required", "Cleared", "Not Cleared", "Met"
    stage: str | None = None
    group: str | None = None
    is_met: bool = False
    status_date: date | None = None


@dataclass(frozen=True, slots=True)
class StatusEvent:
    """One entry of the published status history."""

    status: str
    changed_at: date | datetime | None
    discipline: str | None = None
    is_correction: bool = False
    actor: str | None = None
    comment: str | None = None


@dataclass(frozen=True, slots=True)
class WorkflowTask:
    name: str
    status: str
    completed_at: date | None = None


@dataclass(slots=True)
class PermitSnapshot:
    """Everything one successful fetch observed about one permit.

    `None` on a list field means the portal representation did not include that detail at all
    ("not observed"); an empty list means it was observed and empty. `field_sources` maps a
    field name to the URL its value was read from (provenance).
    """

    jurisdiction: str
    permit_number: str
    raw_status: str
    status: NormalizedStatus
    status_date: date | None = None
    permit_type: str | None = None
    address: str | None = None
    work_description: str | None = None
    applied_date: date | None = None
    issued_date: date | None = None
    finaled_date: date | None = None
    expires_date: date | None = None
    valuation: float | None = None
    parcel: str | None = None
    latitude: float | None = None
    longitude: float | None = None
    inspections: list[Inspection] | None = None
    pending_inspections: list[PendingInspection] | None = None
    conditions: list[Condition] | None = None
    timeline: list[StatusEvent] | None = None
    workflow: list[WorkflowTask] | None = None
    field_sources: dict[str, str] = field(default_factory=dict)
    source_url: str | None = None
    # Field -> why the portal could not give it this time (e.g. "timeline": the processing
    # status request failed). Such a field is None (not observed), never an empty list.
    unavailable: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class SearchFilters:
    """Discovery filters, already validated and normalised by the discovery service
    (`discovery.filters.Filters` adds what discovery itself asks of them)."""

    parcels: tuple[str, ...] = ()
    zip: str | None = None
    latitude: float | None = None
    longitude: float | None = None
    radius_mi: float | None = None
    permit_type: str | None = None
    date_from: date | None = None
    date_to: date | None = None
    value_min: float | None = None
    value_max: float | None = None
    status: str | None = None


@dataclass(frozen=True, slots=True)
class SearchCriteria(SearchFilters):
    """One page of a discovery search at one source: the filters and where the page starts."""

    offset: int = 0
    limit: int = 50

    @classmethod
    def page_of(cls, filters: SearchFilters, offset: int, limit: int) -> SearchCriteria:
        given = {item.name: getattr(filters, item.name) for item in fields(SearchFilters)}
        return cls(**given, offset=offset, limit=limit)


@dataclass(frozen=True, slots=True)
class SearchHit:
    """A thin discovery result: no owner, contractor or inspection fields."""

    permit_number: str
    jurisdiction: str
    address: str | None
    permit_type: str | None
    status: str | None
    valuation: float | None
    applied_date: date | None
    issued_date: date | None
    latitude: float | None = None
    longitude: float | None = None


@dataclass(frozen=True, slots=True)
class SourceFreshness:
    newest_issue_date: date | None  # newest non-future issue date observed in the source
    requested_through: date | None
    lag_days: int | None
    reliability: str  # "operational" | "degraded" | "down"


@dataclass(slots=True)
class SearchPage:
    hits: list[SearchHit]
    has_more: bool
    complete: bool = True  # False when the source read was cut short (partial)
    warnings: list[str] = field(default_factory=list)
    freshness: SourceFreshness | None = None


@dataclass(frozen=True, slots=True)
class HealthProbe:
    ok: bool
    detail: str
    latency_ms: float | None = None


class SourceError(Exception):
    def __init__(self, source: str, message: str) -> None:
        super().__init__(f"{source}: {message}")
        self.source = source
        self.message = message


class RetryLater(SourceError):
    """Transient failure; try again after `retry_after` seconds."""

    def __init__(
        self, source: str, message: str, *, retry_after: float = 30.0, reason: str
    ) -> None:
        super().__init__(source, message)
        self.retry_after = retry_after
        self.reason = (
            reason  # timeout | down | maintenance | throttled | circuit_open | server_error
        )


class NotFoundAtSource(SourceError):
    """The portal answered and confirmed the permit does not exist."""


class PortalChanged(SourceError):
    """The response no longer matches the structure the parser knows."""


class Blocked(SourceError):
    """Access refused: login wall, CAPTCHA or CSRF refusal."""


class SearchNotSupported(SourceError):
    """The family offers no discovery search."""


class QueryNotBuilt(Exception):
    """Validated criteria could not be written as this source's query. Not a SourceError: the
    portal was never asked, so source health and circuits must not hear of it. Discovery's
    filters admit only what every builder can write, so this is our defect (500), never the
    client's and never the portal's."""

    def __init__(self, source: str, cause: BaseException) -> None:
        super().__init__(f"{source}: query not built: {type(cause).__name__}: {cause}")
        self.source = source


class SourceAdapter(Protocol):
    """One portal family. Implementations are stateless apart from their HTTP client.

    Contract:
    - `fetch_permit` returns a full snapshot or raises a `SourceError` subclass; it never returns
      a partial snapshot silently (a missing detail is `None`, "not observed").
    - `search` returns one page of thin hits; `complete=False` with warnings when a read was cut
      short. Families without discovery raise `SearchNotSupported`.
    - Retries of idempotent reads happen inside the HTTP module; a raised `RetryLater` means the
      bounded retries were used up.
    """

    family: str
    slow: bool  # browser-backed: lookups are routed through operations

    async def fetch_permit(
        self, jurisdiction: Jurisdiction, permit_number: str
    ) -> PermitSnapshot: ...

    async def search(self, jurisdiction: Jurisdiction, criteria: SearchCriteria) -> SearchPage: ...

    async def health(self, jurisdiction: Jurisdiction) -> HealthProbe: ...
