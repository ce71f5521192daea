"""The LADBS adapter: PCIS permit report pages per permit, Socrata SoQL for discovery and
enrichment (research/portals.md §1)."""

from __future__ import annotations

import logging
import time
from collections.abc import Awaitable
from datetime import date, timedelta
from typing import TypeVar
from zoneinfo import ZoneInfo

from permitapi.kit.clock import Clock, SystemClock
from permitapi.sources.base import (
    HealthProbe,
    Inspection,
    NotFoundAtSource,
    PermitSnapshot,
    PortalChanged,
    RetryLater,
    SearchCriteria,
    SearchHit,
    SearchPage,
    SourceError,
    SourceFreshness,
)
from permitapi.sources.http import PortalHttp
from permitapi.sources.ladbs import wire
from permitapi.sources.ladbs.numbers import (
    inspection_spellings,
    normalize_permit_number,
    permit_parts,
)
from permitapi.sources.ladbs.pcis import parse_permit_detail
from permitapi.sources.ladbs.snapshot import Sourced, build_snapshot
from permitapi.sources.ladbs.socrata import (
    PermitRow,
    floating,
    parse_floating,
    parse_inspection_rows,
    parse_permit_rows,
    soql_string,
)
from permitapi.sources.ladbs.soql_search import search_where
from permitapi.sources.registry import Jurisdiction

log = logging.getLogger(__name__)

# Not yet issued (no issue_date) last, as the county's ArcGIS layer orders them: discovery's
# merge key needs both sources in one order.
SEARCH_ORDER = "issue_date DESC NULL LAST, :id"
# Newest issue date older than this (calendar days) marks the dataset as lagging. Five days
# leaves room for a weekend plus the dataset's daily refresh.
LAG_DEGRADED_DAYS = 5


class LadbsAdapter:
    family = "ladbs"
    slow = False

    def __init__(self, http: PortalHttp, *, clock: Clock | None = None) -> None:
        self.http = http
        self.clock = clock or SystemClock()

    # -- endpoints ------------------------------------------------------------------------
    @staticmethod
    def _dataset_url(jurisdiction: Jurisdiction, key: str, default: str) -> str:
        base = jurisdiction.endpoints.get("socrata", "https://data.lacity.org").rstrip("/")
        dataset = jurisdiction.endpoints.get(key, default)
        return f"{base}/resource/{dataset}.json"

    def _permits_url(self, jurisdiction: Jurisdiction) -> str:
        return self._dataset_url(jurisdiction, "permits_dataset", "gwh9-jnip")

    def _inspections_url(self, jurisdiction: Jurisdiction) -> str:
        return self._dataset_url(jurisdiction, "inspections_dataset", "9w5z-rg2h")

    def _today(self, jurisdiction: Jurisdiction) -> date:
        # Socrata dates are floating, i.e. publisher-local: compare with the local calendar day.
        return self.clock.now().astimezone(ZoneInfo(jurisdiction.timezone)).date()

    # -- lookup ---------------------------------------------------------------------------
    async def fetch_permit(self, jurisdiction: Jurisdiction, permit_number: str) -> PermitSnapshot:
        """PCIS detail page, then Socrata for what the page lacks.

        Raises NotFoundAtSource for a number that is not an LADBS number or that PCIS does not
        know; RetryLater/Blocked/PortalChanged per `wire` and the page parser. Socrata
        enrichment is best-effort: a transient Socrata failure leaves those fields not observed
        (None) rather than failing a lookup whose status came from PCIS.
        """
        number = normalize_permit_number(permit_number)
        if number is None:
            raise NotFoundAtSource(self.family, f"{permit_number!r} is not an LADBS permit number")
        id1, id2, id3 = permit_parts(number)
        pcis = jurisdiction.endpoints["pcis"].rstrip("/") + "/PcisPermitDetail"
        params = {"id1": id1, "id2": id2, "id3": id3}
        response = await wire.get(self.http, pcis, params, f"PCIS {number}")
        detail = parse_permit_detail(response.text, permit_number=number)
        if normalize_permit_number(detail.permit_number) != number:
            raise PortalChanged(self.family, f"asked PCIS for {number}, got {detail.permit_number}")
        detail.permit_number = number

        row: Sourced[PermitRow] | None = None
        # gwh9-jnip carries only the Building group; trade permits are not in it (research §1.2)
        if detail.group is None or detail.group.casefold() == "building":
            row = await _best_effort(self._permit_row(jurisdiction, number))
        inspections: Sourced[list[Inspection]] | None = None
        if not detail.inspections and (detail.issued or detail.issued_date is not None):
            inspections = await _best_effort(self._inspections(jurisdiction, number))
        return build_snapshot(
            jurisdiction.slug, detail, wire.real_url(pcis, params), row, inspections
        )

    async def _permit_row(
        self, jurisdiction: Jurisdiction, number: str
    ) -> Sourced[PermitRow] | None:
        url = self._permits_url(jurisdiction)
        params = {"permit_nbr": number}
        response = await wire.get(self.http, url, params, f"gwh9-jnip {number}")
        rows = parse_permit_rows(wire.json_payload(response, "gwh9-jnip"))
        matching = [r for r in rows if r.permit_number == number]
        return Sourced(matching[0], wire.real_url(url, params)) if matching else None

    async def _inspections(
        self, jurisdiction: Jurisdiction, number: str
    ) -> Sourced[list[Inspection]]:
        url = self._inspections_url(jurisdiction)
        spaced, dashed = inspection_spellings(number)
        params = {
            "$where": f"permit in({soql_string(spaced)}, {soql_string(dashed)})",
            "$order": "inspection_date DESC",
            "$limit": "5000",
        }
        response = await wire.get(self.http, url, params, f"9w5z-rg2h {number}")
        payload = wire.json_payload(response, "9w5z-rg2h")
        return Sourced(
            parse_inspection_rows(payload, permit_number=number), wire.real_url(url, params)
        )

    # -- discovery ------------------------------------------------------------------------
    async def search(self, jurisdiction: Jurisdiction, criteria: SearchCriteria) -> SearchPage:
        """One page of gwh9-jnip rows newest issue first, plus dataset freshness.

        Fetches `limit + 1` rows to know `has_more`. The freshness query failing transiently
        does not fail the search: the page is returned with a warning and reliability
        `degraded`.
        """
        url = self._permits_url(jurisdiction)
        params = {
            "$order": SEARCH_ORDER,
            "$limit": str(criteria.limit + 1),
            "$offset": str(criteria.offset),
        }
        where = search_where(criteria)
        if where:
            params["$where"] = where
        response = await wire.get(self.http, url, params, "gwh9-jnip search")
        rows = parse_permit_rows(wire.json_payload(response, "gwh9-jnip search"))
        hits = [self._hit(jurisdiction, row) for row in rows[: criteria.limit]]
        page = SearchPage(hits=hits, has_more=len(rows) > criteria.limit)
        try:
            page.freshness = await self._freshness(jurisdiction, criteria)
        except RetryLater as exc:
            page.warnings.append(f"ladbs freshness unavailable: {exc.message}")
            page.freshness = SourceFreshness(
                None, self._requested_through(jurisdiction, criteria), None, "degraded"
            )
        return page

    @staticmethod
    def _hit(jurisdiction: Jurisdiction, row: PermitRow) -> SearchHit:
        return SearchHit(
            permit_number=row.permit_number,
            jurisdiction=jurisdiction.slug,
            address=row.address,
            permit_type=row.permit_type,
            status=row.status_desc,
            valuation=row.valuation,
            applied_date=row.submitted_date,
            issued_date=row.issue_date,
            latitude=row.latitude,
            longitude=row.longitude,
        )

    def _requested_through(self, jurisdiction: Jurisdiction, criteria: SearchCriteria) -> date:
        today = self._today(jurisdiction)
        return min(criteria.date_to, today) if criteria.date_to else today

    async def _freshness(
        self, jurisdiction: Jurisdiction, criteria: SearchCriteria
    ) -> SourceFreshness:
        """Newest non-future issue date in the dataset (future-dated rows exist: data entry)."""
        today = self._today(jurisdiction)
        params = {
            "$select": "max(issue_date) AS newest_issue_date",
            "$where": f"issue_date < {soql_string(floating(today + timedelta(days=1)))}",
        }
        url = self._permits_url(jurisdiction)
        response = await wire.get(self.http, url, params, "gwh9-jnip freshness")
        payload = wire.json_payload(response, "gwh9-jnip freshness")
        if not isinstance(payload, list):
            raise PortalChanged(self.family, "freshness answer is not a JSON array")
        newest = parse_floating(payload[0].get("newest_issue_date")) if payload else None
        through = self._requested_through(jurisdiction, criteria)
        if newest is None:
            return SourceFreshness(None, through, None, "degraded")
        lag = max((today - newest).days, 0)
        reliability = "operational" if lag <= LAG_DEGRADED_DAYS else "degraded"
        return SourceFreshness(newest, through, lag, reliability)

    # -- health ---------------------------------------------------------------------------
    async def health(self, jurisdiction: Jurisdiction) -> HealthProbe:
        """One-row Socrata read; never raises."""
        started = time.perf_counter()
        try:
            url = self._permits_url(jurisdiction)
            response = await wire.get(
                self.http, url, {"$select": "permit_nbr", "$limit": "1"}, "gwh9-jnip health"
            )
            parse_permit_rows(wire.json_payload(response, "gwh9-jnip health"))
        except SourceError as exc:
            return HealthProbe(False, f"{type(exc).__name__}: {exc.message}", _ms(started))
        return HealthProbe(True, "socrata gwh9-jnip answered", _ms(started))


T = TypeVar("T")


async def _best_effort(call: Awaitable[T | None]) -> T | None:
    """Enrichment reads: a transient failure means "not observed", logged, not fatal."""
    try:
        return await call
    except RetryLater as exc:
        log.warning("ladbs enrichment skipped: %s", exc)
        return None


def _ms(started: float) -> float:
    return round((time.perf_counter() - started) * 1000, 1)
