"""The LADBS adapter: PCIS permit report pages per permit, Socrata SoQL for discovery and
enrichment (research/portals.md §1)."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable
from datetime import date, timedelta
from typing import Any, TypeVar
from zoneinfo import ZoneInfo

from permitapi.kit.clock import Clock, SystemClock
from permitapi.sources.base import (
    HealthProbe,
    Inspection,
    NotFoundAtSource,
    PermitSnapshot,
    PortalChanged,
    QueryNotBuilt,
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
from permitapi.sources.ladbs.pcis import PcisDetail, parse_permit_detail
from permitapi.sources.ladbs.snapshot import Sourced, build_snapshot
from permitapi.sources.ladbs.socrata import (
    PermitRow,
    floating,
    in_list,
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
# Inspection rows read per permit (the dataset repeats events up to four times).
INSPECTION_ROWS_PER_PERMIT = 5000
SOCRATA_MAX_LIMIT = 50_000  # the largest $limit a SODA 2.0 endpoint honours
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
        """PCIS detail page and its gwh9-jnip row at once, then 9w5z-rg2h if the page lacks
        the inspection history.

        Raises NotFoundAtSource for a number that is not an LADBS number or that PCIS does not
        know; RetryLater/Blocked/PortalChanged per `wire` and the page parser. Socrata
        enrichment is best-effort: a transient Socrata failure leaves those fields not observed
        (None) rather than failing a lookup whose status came from PCIS.
        """
        number = _checked_number(permit_number)
        # The row is read before the page says whether it can exist (gwh9-jnip holds only the
        # Building group, research §1.2): a trade permit's read is wasted, but every Building
        # permit saves a round trip.
        row_read = asyncio.ensure_future(self._permit_row(jurisdiction, number))
        try:
            detail, detail_url = await self._detail(jurisdiction, number)
            row = await _best_effort(row_read) if _is_building(detail) else None
        finally:
            await _abandon(row_read)
        inspections: Sourced[list[Inspection]] | None = None
        if _needs_inspections(detail):
            inspections = await _best_effort(self._inspections(jurisdiction, number))
        return build_snapshot(jurisdiction.slug, detail, detail_url, row, inspections)

    async def fetch_many(
        self, jurisdiction: Jurisdiction, permit_numbers: list[str]
    ) -> dict[str, PermitSnapshot | SourceError]:
        """`fetch_permit` for many permits (batch status), with the Socrata reads shared.

        One PCIS page per permit, all concurrently (within the hosts' politeness caps); with
        them, ONE gwh9-jnip query for every permit (`permit_nbr in(...)`) and ONE 9w5z-rg2h
        query for every permit, speculative: its rows are used only for the permits that need
        them (issued, page lists no inspection). So a 25-permit batch costs 25 pages plus two
        Socrata queries, in about one round trip. Results are keyed by the numbers as given; a
        permit's failure is its value. The same best-effort rule as `fetch_permit` applies to
        the shared Socrata reads.
        """
        results: dict[str, PermitSnapshot | SourceError] = {}
        numbers: dict[str, str] = {}  # as given -> normalised
        for given in permit_numbers:
            try:
                numbers[given] = _checked_number(given)
            except NotFoundAtSource as exc:
                results[given] = exc
        unique = list(dict.fromkeys(numbers.values()))
        if unique:
            built = await self._fetch_unique(jurisdiction, unique)
            results.update({given: built[number] for given, number in numbers.items()})
        return results

    async def _fetch_unique(
        self, jurisdiction: Jurisdiction, unique: list[str]
    ) -> dict[str, PermitSnapshot | SourceError]:
        # Both Socrata reads go out with the pages: waiting for the pages to say which permits
        # need them would add a round trip to every batch.
        rows_read = asyncio.ensure_future(self._permit_rows_result(jurisdiction, unique))
        shared_read = asyncio.ensure_future(self._inspections_shared(jurisdiction, unique))
        try:
            pages = await asyncio.gather(
                *(self._detail(jurisdiction, n) for n in unique), return_exceptions=True
            )
            details = dict(zip(unique, pages, strict=True))
            needing = [
                n for n, d in details.items() if isinstance(d, tuple) and _needs_inspections(d[0])
            ]
            rows = await rows_read
            inspections = await self._needed_inspections(jurisdiction, needing, shared_read)
        finally:
            await _abandon(rows_read)
            await _abandon(shared_read)
        return {
            number: _built(jurisdiction, number, page, rows, inspections)
            for number, page in details.items()
        }

    async def _detail(self, jurisdiction: Jurisdiction, number: str) -> tuple[PcisDetail, str]:
        """The parsed PCIS page of a normalised number, and its real URL."""
        id1, id2, id3 = permit_parts(number)
        pcis = jurisdiction.endpoints["pcis"].rstrip("/") + "/PcisPermitDetail"
        params = {"id1": id1, "id2": id2, "id3": id3}
        response = await wire.get(self.http, pcis, params, f"PCIS {number}")
        detail = parse_permit_detail(response.text, permit_number=number)
        if normalize_permit_number(detail.permit_number) != number:
            raise PortalChanged(self.family, f"asked PCIS for {number}, got {detail.permit_number}")
        detail.permit_number = number
        return detail, wire.real_url(pcis, params)

    async def _permit_row(
        self, jurisdiction: Jurisdiction, number: str
    ) -> Sourced[PermitRow] | None:
        url = self._permits_url(jurisdiction)
        params = {"permit_nbr": number}
        response = await wire.get(self.http, url, params, f"gwh9-jnip {number}")
        rows = parse_permit_rows(wire.json_payload(response, "gwh9-jnip"))
        matching = [r for r in rows if r.permit_number == number]
        return Sourced(matching[0], wire.real_url(url, params)) if matching else None

    async def _permit_rows_result(
        self, jurisdiction: Jurisdiction, numbers: list[str]
    ) -> dict[str, Sourced[PermitRow]] | SourceError:
        """gwh9-jnip rows of many permits; a failure is returned (it only matters for the
        Building-group permits, known once their pages are parsed). Transient: no rows."""
        try:
            return await _best_effort(self._permit_rows(jurisdiction, numbers)) or {}
        except SourceError as exc:
            return exc

    async def _permit_rows(
        self, jurisdiction: Jurisdiction, numbers: list[str]
    ) -> dict[str, Sourced[PermitRow]]:
        url = self._permits_url(jurisdiction)
        params = {"$where": in_list("permit_nbr", numbers), "$limit": str(len(numbers) * 4)}
        response = await wire.get(self.http, url, params, f"gwh9-jnip {len(numbers)} permits")
        found: dict[str, Sourced[PermitRow]] = {}
        for row in parse_permit_rows(wire.json_payload(response, "gwh9-jnip")):
            if row.permit_number in numbers and row.permit_number not in found:
                # Provenance names the permit's own query: the same row, one link per permit.
                source = wire.real_url(url, {"permit_nbr": row.permit_number})
                found[row.permit_number] = Sourced(row, source)
        return found

    async def change_signatures(
        self, jurisdiction: Jurisdiction, permit_numbers: list[str]
    ) -> dict[str, str]:
        """The open-data row's status and status date per permit, one `permit_nbr in (...)`
        query for up to CHANGE_BATCH permits (the dataset's `:updated_at` is a whole-dataset
        reload time, useless as a per-permit change marker; `status_date` is not)."""
        found: dict[str, str] = {}
        url = self._permits_url(jurisdiction)
        for start in range(0, len(permit_numbers), CHANGE_BATCH):
            chunk = permit_numbers[start : start + CHANGE_BATCH]
            params = {
                "$select": "permit_nbr,status_desc,status_date",
                "$where": in_list("permit_nbr", chunk),
                "$limit": str(len(chunk) * 4),
            }
            response = await wire.get(self.http, url, params, f"gwh9-jnip {len(chunk)} changes")
            for row in parse_permit_rows(wire.json_payload(response, "gwh9-jnip")):
                if row.permit_number in chunk and row.permit_number not in found:
                    found[row.permit_number] = f"{row.status_desc or ''}|{row.status_date or ''}"
        return found

    def _inspection_params(self, numbers: list[str], limit: int) -> dict[str, str]:
        spellings = [spelling for n in numbers for spelling in inspection_spellings(n)]
        return {
            "$where": in_list("permit", spellings),
            "$order": "inspection_date DESC",
            "$limit": str(limit),
        }

    async def _inspections(
        self, jurisdiction: Jurisdiction, number: str
    ) -> Sourced[list[Inspection]]:
        url = self._inspections_url(jurisdiction)
        params = self._inspection_params([number], INSPECTION_ROWS_PER_PERMIT)
        response = await wire.get(self.http, url, params, f"9w5z-rg2h {number}")
        payload = wire.json_payload(response, "9w5z-rg2h")
        return Sourced(
            parse_inspection_rows(payload, permit_number=number), wire.real_url(url, params)
        )

    async def _inspections_shared(
        self, jurisdiction: Jurisdiction, numbers: list[str]
    ) -> dict[str, Sourced[list[Inspection]]] | None:
        """9w5z-rg2h rows of many permits in one query; None when the answer fills its
        `$limit` (it may be cut: the permits that need a history are then read one by one,
        never given a silently cut one)."""
        if len(numbers) == 1:
            return {numbers[0]: await self._inspections(jurisdiction, numbers[0])}
        url = self._inspections_url(jurisdiction)
        limit = min(INSPECTION_ROWS_PER_PERMIT * len(numbers), SOCRATA_MAX_LIMIT)
        params = self._inspection_params(numbers, limit)
        response = await wire.get(self.http, url, params, f"9w5z-rg2h {len(numbers)} permits")
        payload = wire.json_payload(response, "9w5z-rg2h")
        if isinstance(payload, list) and len(payload) >= limit:
            return None
        return {
            number: Sourced(
                parse_inspection_rows(payload, permit_number=number),
                wire.real_url(url, self._inspection_params([number], INSPECTION_ROWS_PER_PERMIT)),
            )
            for number in numbers
        }

    async def _needed_inspections(
        self,
        jurisdiction: Jurisdiction,
        needing: list[str],
        shared_read: asyncio.Future[dict[str, Sourced[list[Inspection]]] | None],
    ) -> dict[str, Sourced[list[Inspection]]] | SourceError:
        """The histories of the permits in `needing`, from the shared read; best effort as in
        `fetch_permit` (transient failure: none observed), a parse failure is returned."""
        if not needing:
            return {}
        try:
            return await _best_effort(self._from_shared(jurisdiction, needing, shared_read)) or {}
        except SourceError as exc:
            return exc

    async def _from_shared(
        self,
        jurisdiction: Jurisdiction,
        needing: list[str],
        shared_read: asyncio.Future[dict[str, Sourced[list[Inspection]]] | None],
    ) -> dict[str, Sourced[list[Inspection]]]:
        shared = await shared_read
        if shared is None:
            singles = await asyncio.gather(*(self._inspections(jurisdiction, n) for n in needing))
            return dict(zip(needing, singles, strict=True))
        return {number: shared[number] for number in needing}

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
        try:
            where = search_where(criteria)
        except Exception as exc:
            raise QueryNotBuilt(jurisdiction.slug, exc) from exc
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
# Permits per change-feed query: about 4 KB of SoQL, well inside Socrata's URL limits.
CHANGE_BATCH = 200


def _built(
    jurisdiction: Jurisdiction,
    number: str,
    page: tuple[PcisDetail, str] | BaseException,
    rows: dict[str, Sourced[PermitRow]] | SourceError,
    inspections: dict[str, Sourced[list[Inspection]]] | SourceError,
) -> PermitSnapshot | SourceError:
    """One permit of a batch from its page and the shared reads, as `fetch_permit` would."""
    if isinstance(page, SourceError):
        return page
    if isinstance(page, BaseException):
        raise page
    detail, detail_url = page
    row: Sourced[PermitRow] | None = None
    if _is_building(detail):
        if isinstance(rows, SourceError):
            return rows
        row = rows.get(number)
    inspected: Sourced[list[Inspection]] | None = None
    if _needs_inspections(detail):
        if isinstance(inspections, SourceError):
            return inspections
        inspected = inspections.get(number)
    return build_snapshot(jurisdiction.slug, detail, detail_url, row, inspected)


def _checked_number(permit_number: str) -> str:
    number = normalize_permit_number(permit_number)
    if number is None:
        raise NotFoundAtSource("ladbs", f"{permit_number!r} is not an LADBS permit number")
    return number


def _is_building(detail: PcisDetail) -> bool:
    return detail.group is None or detail.group.casefold() == "building"


def _needs_inspections(detail: PcisDetail) -> bool:
    """Socrata stands in for the inspection history only when the page lists none on an
    issued permit."""
    return not detail.inspections and (detail.issued or detail.issued_date is not None)


async def _best_effort(call: Awaitable[T | None]) -> T | None:
    """Enrichment reads: a transient failure means "not observed", logged, not fatal."""
    try:
        return await call
    except RetryLater as exc:
        log.warning("ladbs enrichment skipped: %s", exc)
        return None


async def _abandon(read: asyncio.Future[Any]) -> None:
    """Stop a speculative read whose answer is no longer wanted (a no-op once it finished) and
    collect its outcome, so it is neither left pending nor logged as an unretrieved error."""
    read.cancel()
    await asyncio.wait([read])
    if not read.cancelled():
        read.exception()


def _ms(started: float) -> float:
    return round((time.perf_counter() - started) * 1000, 1)
