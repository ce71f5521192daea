"""EPIC-LA (LA County Public Works) adapter: ArcGIS for status and dates, EnerGov for detail.

Status, dates, address, parcel, valuation and location come from the public ArcGIS layer
(verified). Workflow steps and inspections come from the EnerGov Self Service JSON API when it
answers (assumed shapes, see energov.py); when it does not, they are None ("not observed") and
the lookup still succeeds.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import date
from typing import Any, TypeVar
from urllib.parse import urlencode
from zoneinfo import ZoneInfo

import httpx

from permitapi.kit.clock import Clock, SystemClock
from permitapi.sources.base import (
    Blocked,
    HealthProbe,
    Inspection,
    NormalizedStatus,
    NotFoundAtSource,
    PendingInspection,
    PermitSnapshot,
    PortalChanged,
    QueryNotBuilt,
    RetryLater,
    SearchCriteria,
    SearchHit,
    SearchPage,
    SourceError,
    SourceFreshness,
    WorkflowTask,
)
from permitapi.sources.epicla import energov, query
from permitapi.sources.epicla.arcgis import (
    ArcGisCase,
    epoch_ms_to_date,
    load_json,
    parse_count,
    parse_feature,
    parse_query_page,
    parse_statistic,
)
from permitapi.sources.epicla.status import (
    FINAL_STATUSES,
    PLAN_MODULE,
    normalize_case_status,
)
from permitapi.sources.http import PortalHttp
from permitapi.sources.registry import Jurisdiction

log = logging.getLogger(__name__)
T = TypeVar("T")

# Cases per change-feed query: about 4 KB of where clause, inside ArcGIS's URL and record caps.
CHANGE_BATCH = 200
DEFAULT_TENANT_ID = "1"  # EnerGov's usual single-tenant id; override with `energov_tenant_id`
ARCGIS_FIELDS = (
    "status", "raw_status", "status_date", "permit_type", "address", "work_description",
    "applied_date", "issued_date", "finaled_date", "expires_date", "valuation", "parcel",
    "latitude", "longitude",
)  # fmt: skip


@dataclass(slots=True)
class EnerGovDetail:
    """Best-effort EnerGov part of a lookup; None fields were not observed."""

    workflow: list[WorkflowTask] | None = None
    inspections: list[Inspection] | None = None
    pending: list[PendingInspection] | None = None
    case_id: str | None = None
    workflow_url: str | None = None
    inspections_url: str | None = None


def normalize_case_number(permit_number: str) -> str:
    return "".join(permit_number.split()).upper()


def _check_status(response: httpx.Response, what: str) -> None:
    """Judge what PortalHttp lets through: it has already raised for timeouts, connection
    failures, 403, 429 and 500/502/503/504, so only other codes are left (401, 501, 4xx)."""
    code = response.status_code
    if code == 200:
        return
    if code == 401:
        raise Blocked("epicla", f"{what}: HTTP {code}")
    if code >= 500:
        raise RetryLater("epicla", f"{what}: HTTP {code}", reason="server_error")
    raise PortalChanged("epicla", f"{what}: unexpected HTTP {code}")


def _looks_like_maintenance(response: httpx.Response) -> bool:
    if "html" not in response.headers.get("content-type", ""):
        return False
    text = response.text[:4000].casefold()
    return "maintenance" in text or "temporarily unavailable" in text


class EpicLaAdapter:
    """SourceAdapter for the `epicla` family. Stateless apart from the shared HTTP client."""

    family = "epicla"
    slow = False

    def __init__(self, http: PortalHttp, *, clock: Clock | None = None) -> None:
        self.http = http
        self.clock: Clock = clock or SystemClock()

    # -- SourceAdapter ----------------------------------------------------------------------
    async def fetch_permit(self, jurisdiction: Jurisdiction, permit_number: str) -> PermitSnapshot:
        number = normalize_case_number(permit_number)
        query_url = self._query_url(jurisdiction)
        params = query.lookup_params(number)
        payload = await self._arcgis(jurisdiction, query_url, params, "lookup")
        page = parse_query_page(payload)
        cases = [parse_feature(feature, page.spatial_wkid) for feature in page.features]
        matches = [case for case in cases if case.case_number == number]
        if not matches:
            # The layer answered an exact CASENUMBER query with no row: the case does not exist.
            raise NotFoundAtSource(jurisdiction.slug, f"no EPIC-LA case {number}")
        # A case can appear on several history rows; the highest OBJECTID is the latest one.
        case = max(matches, key=lambda c: c.object_id or 0)
        detail = await self._energov_detail(jurisdiction, case)
        return self._snapshot(jurisdiction, case, detail, f"{query_url}?{urlencode(params)}")

    async def change_signatures(
        self, jurisdiction: Jurisdiction, permit_numbers: list[str]
    ) -> dict[str, str]:
        """Status and the dates the layer keeps per case (issued, completed, expires, last
        inspection), one `CASENUMBER IN (...)` query per CHANGE_BATCH cases; a case beyond a
        truncated answer is left out (its caller reads it in full instead)."""
        found: dict[str, str] = {}
        query_url = self._query_url(jurisdiction)
        numbers = [normalize_case_number(n) for n in permit_numbers]
        for start in range(0, len(numbers), CHANGE_BATCH):
            chunk = numbers[start : start + CHANGE_BATCH]
            params = query.changes_params(chunk)
            payload = await self._arcgis(jurisdiction, query_url, params, "changes")
            page = parse_query_page(payload)
            latest: dict[str, ArcGisCase] = {}
            for feature in page.features:
                case = parse_feature(feature, page.spatial_wkid)
                held = latest.get(case.case_number)
                if held is None or (case.object_id or 0) > (held.object_id or 0):
                    latest[case.case_number] = case
            for number, case in latest.items():
                if number in chunk:
                    found[number] = "|".join(
                        str(v or "")
                        for v in (
                            case.status,
                            case.issued,
                            case.completed,
                            case.expires,
                            case.last_inspection,
                        )
                    )
        return found

    async def search(self, jurisdiction: Jurisdiction, criteria: SearchCriteria) -> SearchPage:
        query_url = self._query_url(jurisdiction)
        try:
            params = query.search_params(criteria)
        except Exception as exc:
            raise QueryNotBuilt(jurisdiction.slug, exc) from exc
        payload = await self._arcgis(jurisdiction, query_url, params, "search")
        page = parse_query_page(payload)
        hits = []
        for feature in page.features:
            case = parse_feature(feature, page.spatial_wkid)
            hits.append(
                SearchHit(
                    permit_number=case.case_number,
                    jurisdiction=jurisdiction.slug,
                    address=case.address,
                    permit_type=case.case_name,
                    status=case.status or None,
                    valuation=case.valuation,
                    applied_date=case.applied,
                    issued_date=case.issued,
                    latitude=case.latitude,
                    longitude=case.longitude,
                )
            )
        result = SearchPage(hits=hits, has_more=page.exceeded_transfer_limit)
        try:
            result.freshness = await self.freshness(jurisdiction, criteria.date_to)
        except SourceError as exc:
            # The hits are complete; only the freshness metadata is missing.
            result.warnings.append(f"epicla freshness unavailable: {exc.message}")
        return result

    async def health(self, jurisdiction: Jurisdiction) -> HealthProbe:
        started = time.perf_counter()
        try:
            payload = await self._arcgis(
                jurisdiction, self._query_url(jurisdiction), query.count_params(), "health"
            )
            count = parse_count(payload)
        except SourceError as exc:
            elapsed = (time.perf_counter() - started) * 1000
            return HealthProbe(ok=False, detail=f"{type(exc).__name__}: {exc.message}",
                               latency_ms=elapsed)  # fmt: skip
        elapsed = (time.perf_counter() - started) * 1000
        return HealthProbe(ok=True, detail=f"{count} cases in the layer", latency_ms=elapsed)

    # -- freshness --------------------------------------------------------------------------
    def today(self, jurisdiction: Jurisdiction) -> date:
        return self.clock.now().astimezone(ZoneInfo(jurisdiction.timezone)).date()

    async def freshness(
        self, jurisdiction: Jurisdiction, requested_through: date | None = None
    ) -> SourceFreshness:
        today = self.today(jurisdiction)
        payload = await self._arcgis(
            jurisdiction,
            self._query_url(jurisdiction),
            query.freshness_params(today),
            "freshness",
        )
        newest = epoch_ms_to_date(parse_statistic(payload, query.NEWEST_ISSUE_FIELD))
        through = min(requested_through, today) if requested_through else today
        # Lag is the layer's age (to today), whatever window was asked for: measured to an
        # earlier date_to it went negative. Not turned into `degraded` as on LADBS: the
        # unincorporated areas issue too few permits for the newest date to prove staleness.
        lag = max((today - newest).days, 0) if newest else None
        return SourceFreshness(newest, through, lag, "operational")

    # -- ArcGIS -----------------------------------------------------------------------------
    @staticmethod
    def _query_url(jurisdiction: Jurisdiction) -> str:
        layer = jurisdiction.endpoints.get("arcgis_layer")
        if not layer:
            raise PortalChanged(jurisdiction.slug, "no arcgis_layer endpoint in the directory")
        return f"{layer.rstrip('/')}/query"

    async def _arcgis(
        self, jurisdiction: Jurisdiction, url: str, params: Mapping[str, str], what: str
    ) -> Any:
        try:
            response = await self.http.request(jurisdiction.slug, "GET", url, params=params)
        except httpx.HTTPError as exc:
            # PortalHttp types timeouts and connection failures; what is left (a body that
            # fails to decode, say) is still a transient answer, not "not found".
            raise RetryLater(jurisdiction.slug, f"{what}: {exc!r}", reason="down") from exc
        _check_status(response, what)
        if _looks_like_maintenance(response):
            raise RetryLater(jurisdiction.slug, f"{what}: maintenance page", reason="maintenance")
        return load_json(response.content, what)

    # -- EnerGov (best effort) --------------------------------------------------------------
    async def _energov_detail(self, jurisdiction: Jurisdiction, case: ArcGisCase) -> EnerGovDetail:
        base = (jurisdiction.endpoints.get("energov") or jurisdiction.portal_base_url).rstrip("/")
        detail = EnerGovDetail(case_id=case.case_id)
        try:
            if detail.case_id is None:
                payload = await self._energov(
                    jurisdiction, "POST", base + energov.SEARCH_PATH,
                    json=energov.search_body(case.case_number),
                )  # fmt: skip
                found = energov.find_case(energov.parse_search(payload), case.case_number)
                if found is None:
                    return detail
                detail.case_id = found.case_id
        except energov.EnerGovUnavailable as exc:
            log.info("epicla: EnerGov search for %s not observed: %s", case.case_number, exc)
            return detail
        detail.workflow_url = base + energov.WORKFLOW_PATH.format(case_id=detail.case_id)
        detail.inspections_url = base + energov.INSPECTIONS_PATH.format(case_id=detail.case_id)
        workflow, inspections = await asyncio.gather(
            self._energov_part(jurisdiction, detail.workflow_url, energov.parse_workflow),
            self._energov_part(jurisdiction, detail.inspections_url, energov.parse_inspections),
        )
        detail.workflow = workflow
        if inspections is not None:
            detail.inspections, detail.pending = inspections
        return detail

    async def _energov_part(
        self, jurisdiction: Jurisdiction, url: str, parse: Callable[[Any], T]
    ) -> T | None:
        try:
            return parse(await self._energov(jurisdiction, "GET", url))
        except energov.EnerGovUnavailable as exc:
            log.info("epicla: EnerGov detail not observed: %s", exc)
            return None

    async def _energov(
        self, jurisdiction: Jurisdiction, method: str, url: str, *, json: Any = None
    ) -> Any:
        headers = {
            "tenantId": str(jurisdiction.extra.get("energov_tenant_id", DEFAULT_TENANT_ID)),
            "Accept": "application/json",
        }
        try:
            # Own source key, so EnerGov failures never open the ArcGIS circuit; no retries
            # (idempotent=False) because a missing detail is reported, not waited for.
            response = await self.http.request(
                f"{jurisdiction.slug}:energov", method, url, json=json, headers=headers,
                idempotent=False,
            )  # fmt: skip
        except (SourceError, httpx.HTTPError) as exc:
            raise energov.EnerGovUnavailable(f"{method} {url}: {exc!r}") from exc
        if response.status_code != 200:
            raise energov.EnerGovUnavailable(f"{method} {url}: HTTP {response.status_code}")
        return energov.decode(response.content)

    # -- snapshot ---------------------------------------------------------------------------
    def _snapshot(
        self, jurisdiction: Jurisdiction, case: ArcGisCase, detail: EnerGovDetail, arcgis_url: str
    ) -> PermitSnapshot:
        status = normalize_case_status(case.status, case.module, case.last_inspection)
        final = status in FINAL_STATUSES
        snapshot = PermitSnapshot(
            jurisdiction=jurisdiction.slug,
            permit_number=case.case_number,
            raw_status=case.status,
            status=status,
            status_date=_status_date(status, case),
            permit_type=case.case_name,
            address=case.address,
            work_description=case.description or case.project_name,
            applied_date=case.applied,
            issued_date=case.issued,
            # Final dates only on final statuses; an expiry is moot once the permit finaled.
            finaled_date=case.completed if final else None,
            expires_date=None if final else case.expires,
            valuation=case.valuation,
            parcel=case.parcel,
            latitude=case.latitude,
            longitude=case.longitude,
            inspections=detail.inspections,
            pending_inspections=detail.pending,
            conditions=None,
            timeline=None,
            workflow=detail.workflow,
        )
        sources = {
            name: arcgis_url for name in ARCGIS_FIELDS if getattr(snapshot, name) is not None
        }
        if detail.workflow is not None and detail.workflow_url:
            sources["workflow"] = detail.workflow_url
        if detail.inspections is not None and detail.inspections_url:
            sources["inspections"] = detail.inspections_url
            sources["pending_inspections"] = detail.inspections_url
        snapshot.field_sources = sources
        snapshot.source_url = _portal_page(jurisdiction, case, detail.case_id)
        return snapshot


def _status_date(status: NormalizedStatus, case: ArcGisCase) -> date | None:
    """The date of the event the current status stands for, when the layer publishes it."""
    if status in FINAL_STATUSES:
        return case.completed
    if status in (NormalizedStatus.ISSUED, NormalizedStatus.INSPECTIONS):
        return case.issued
    if status is NormalizedStatus.EXPIRED:
        return case.expires
    if status is NormalizedStatus.APPLICATION_RECEIVED:
        return case.applied
    return None


def _portal_page(jurisdiction: Jurisdiction, case: ArcGisCase, case_id: str | None) -> str:
    base = (jurisdiction.endpoints.get("energov") or jurisdiction.portal_base_url).rstrip("/")
    if case_id:
        route = "plan" if case.module == PLAN_MODULE else "permit"
        return f"{base}/#/{route}/{case_id}"
    return f"{base}/#/search?m=2&ps=10&pn=1&em=true&st={case.case_number}"
