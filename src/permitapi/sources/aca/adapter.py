"""AcaAdapter: one WebForms conversation per lookup, for every `aca:<code>` agency.

Steps (research/portals.md §3.3-3.5): GET CapHome (session cookie + hidden fields), POST the
general search by record number with every hidden field and same-origin Referer/Origin, take
the one-result redirect or the grid row whose number equals the one asked for (capIDs are
harvested from its link, never derived), GET CapDetail (with the Inspections section where
the agency shows inspections anonymously), POST the GetProcessingData page method.

Errors: a login wall or CSRF refusal is Blocked; a maintenance page, timeouts, 5xx and
throttling are RetryLater; "Your search returned no results" (or a search that lands on some
other record) is NotFoundAtSource; anything unrecognised is PortalChanged. Error.aspx means
ACA lost our session state (expired session, stale viewstate): the lookup is retried once
with a fresh session, then reported as RetryLater — docs/decisions.md "Accela".
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

import httpx

from permitapi.sources.aca import urls
from permitapi.sources.aca.detail import parse_detail
from permitapi.sources.aca.inspections import (
    ANSWER_PANEL_IDS,
    COMPLETED_PANEL,
    PANEL,
    REFRESH_TARGET,
    SCRIPT_MANAGER,
    InspectionItem,
    InspectionListError,
    InspectionLists,
    parse_inspections,
    parse_panel_fragment,
)
from permitapi.sources.aca.pages import (
    PERMIT_NUMBER_FIELD,
    SEARCH_BUTTON,
    DeltaError,
    PageKind,
    classify,
    parse_delta,
    parse_form,
)
from permitapi.sources.aca.processing import (
    ProcessingDataError,
    ProcessingTask,
    fragment_from_json,
    parse_processing,
)
from permitapi.sources.aca.results import ResultRow, cap_id_from_url, parse_results
from permitapi.sources.aca.snapshot import Provenance, build_snapshot
from permitapi.sources.base import (
    Blocked,
    HealthProbe,
    NotFoundAtSource,
    PermitSnapshot,
    PortalChanged,
    RetryLater,
    SearchCriteria,
    SearchNotSupported,
    SearchPage,
    SourceError,
)
from permitapi.sources.browser.reader import PageReader
from permitapi.sources.http import PortalHttp
from permitapi.sources.registry import Jurisdiction

MAX_RESULT_PAGES = 10  # ACA caps a search at 100 rows, 10 per page
MAX_REDIRECTS = 3
# The completed-inspections grid shows five rows a page; ten pages (50 inspections) is the most
# one lookup asks for, each page one more paced request to the agency.
MAX_INSPECTION_PAGES = 10


class _SessionLost(Exception):
    """ACA answered Error.aspx: our session or viewstate is no longer accepted."""


@dataclass(slots=True)
class _Page:
    url: str  # real URL of the page finally read (after redirects)
    html: str
    kind: PageKind


@dataclass(slots=True)
class _Conversation:
    """One portal session: its cookie jar and the page the next request comes from."""

    http: PortalHttp
    jurisdiction: Jurisdiction
    cookies: httpx.Cookies = field(default_factory=httpx.Cookies)

    @property
    def slug(self) -> str:
        return self.jurisdiction.slug

    async def send(
        self,
        method: str,
        url: str,
        *,
        referer: str | None = None,
        data: dict[str, str] | None = None,
        json: Any = None,
        extra: dict[str, str] | None = None,
    ) -> httpx.Response:
        headers = {"Accept-Language": "en-US"}
        if referer is not None:
            # ACA refuses postbacks without same-origin Referer and Origin (CSRF check).
            headers["Referer"] = referer
            headers["Origin"] = urls.origin_of(referer)
        headers.update(extra or {})
        response = await self.http.request(
            self.slug,
            method,
            url,
            data=data,
            json=json,
            headers=headers,
            cookies=self.cookies,
            idempotent=method == "GET",
        )
        # PortalHttp has raised for 403, 429 and 500/502/503/504; other 5xx codes remain.
        if response.status_code >= 500:
            raise RetryLater(
                self.slug, f"HTTP {response.status_code} from {url}", reason="server_error"
            )
        return response

    def redirect_target(self, url: str, response: httpx.Response) -> str:
        location = response.headers.get("location", "")
        target = urls.resolve(url, location)
        lowered = target.casefold()
        if "login.aspx" in lowered:
            raise Blocked(self.slug, "redirected to Login.aspx (anonymous access disabled)")
        if "error.aspx" in lowered:
            raise _SessionLost(target)
        return target

    async def page(
        self,
        method: str,
        url: str,
        *,
        referer: str | None = None,
        data: dict[str, str] | None = None,
    ) -> _Page:
        """An HTML page after following redirects, classified; walls and errors raise."""
        response = await self.send(method, url, referer=referer, data=data)
        for _ in range(MAX_REDIRECTS):
            if not response.is_redirect:
                break
            previous, url = url, self.redirect_target(url, response)
            response = await self.send("GET", url, referer=previous)
        if response.is_redirect:
            raise PortalChanged(self.slug, f"redirect loop at {url}")
        if response.status_code >= 400:
            raise PortalChanged(self.slug, f"HTTP {response.status_code} from {url}")
        html = response.text
        kind = classify(html)
        if kind in (PageKind.LOGIN, PageKind.CSRF):
            raise Blocked(self.slug, f"{kind.value} page at {url}")
        if kind is PageKind.ERROR:
            raise _SessionLost(url)
        if kind is PageKind.MAINTENANCE:
            raise RetryLater(self.slug, "maintenance page", reason="maintenance", retry_after=300)
        return _Page(url, html, kind)

    async def record_page(self, reader: PageReader, url: str, *, referer: str | None) -> _Page:
        """The CapDetail page, over HTTP or in the browser as the jurisdiction's `fetch` and
        the page classifier decide (permitapi.sources.browser.reader)."""
        if not await reader.browser_first(self.jurisdiction):
            page = await self.page("GET", url, referer=referer)
            if page.kind is PageKind.DETAIL or not await reader.browser_after(
                self.jurisdiction, page.html
            ):
                return page
        rendered = await reader.read(self.jurisdiction, url, cookies=self.cookies)
        kind = classify(rendered.html)
        if kind in (PageKind.LOGIN, PageKind.CSRF):
            raise Blocked(self.slug, f"{kind.value} page at {url} (browser)")
        if kind is PageKind.ERROR:
            raise _SessionLost(url)
        if kind is PageKind.MAINTENANCE:
            raise RetryLater(self.slug, "maintenance page", reason="maintenance", retry_after=300)
        return _Page(url, rendered.html, kind)


class AcaAdapter:
    family = "aca"
    slow = True
    reads_pages = True  # takes the process's PageReader (browser-backed record pages)

    def __init__(self, http: PortalHttp, pages: PageReader | None = None) -> None:
        self.http = http
        self.pages = pages or PageReader()

    async def fetch_permit(self, jurisdiction: Jurisdiction, permit_number: str) -> PermitSnapshot:
        """Look one record up by its record number. Raises a SourceError subclass."""
        try:
            return await self._lookup(jurisdiction, permit_number)
        except _SessionLost:
            pass  # a fresh session once: ACA sessions expire and viewstate goes stale
        except RetryLater as exc:
            # PortalHttp reports a redirect to Error.aspx as portal_error: the same lost session.
            if exc.reason != "portal_error":
                raise
        try:
            return await self._lookup(jurisdiction, permit_number)
        except _SessionLost as exc:
            raise RetryLater(
                jurisdiction.slug, f"Error.aspx twice ({exc})", reason="portal_error"
            ) from exc

    async def probe_signature(
        self, jurisdiction: Jurisdiction, permit_number: str, detail_url: str
    ) -> str:
        """One GET of the record's CapDetail page (the URL a full lookup stored), plus its
        inspection postback where the agency shows inspections: its status and inspection
        results, so a daily check reads the whole record only when they
        changed. Raises like a lookup (a stale capID lands on Error.aspx: PortalChanged)."""
        talk = _Conversation(self.http, jurisdiction)
        record = await talk.record_page(self.pages, detail_url, referer=None)
        detail = parse_detail(record.html) if record.kind is PageKind.DETAIL else None
        if detail is None or permit_key(detail.permit_number) != permit_key(permit_number):
            raise PortalChanged(jurisdiction.slug, "the stored record page no longer matches")
        results = ""
        if jurisdiction.anonymous_inspections:
            # The lists come by the page's own postback: one more request, as a browser sends.
            inspections = await self._inspections(talk, record)
            completed = inspections.completed if inspections is not None else []
            results = ";".join(f"{item}" for item in completed)
        return f"{detail.status}|{results}"

    async def search(self, jurisdiction: Jurisdiction, criteria: SearchCriteria) -> SearchPage:
        raise SearchNotSupported(jurisdiction.slug, "discovery is offered for LADBS and EPIC-LA")

    async def health(self, jurisdiction: Jurisdiction) -> HealthProbe:
        started = time.perf_counter()
        talk = _Conversation(self.http, jurisdiction)
        try:
            page = await talk.page("GET", urls.caphome_url(jurisdiction))
        except (SourceError, _SessionLost) as exc:
            return HealthProbe(False, f"{type(exc).__name__}: {exc}", _ms(started))
        form = parse_form(page.html)
        ok = page.kind is PageKind.SEARCH_FORM and form is not None
        detail = "search form present" if ok else f"unexpected {page.kind.value} page"
        return HealthProbe(ok, detail, _ms(started))

    # -- the conversation -----------------------------------------------------------------
    async def _lookup(self, jurisdiction: Jurisdiction, permit_number: str) -> PermitSnapshot:
        slug = jurisdiction.slug
        talk = _Conversation(self.http, jurisdiction)
        home = await talk.page("GET", urls.caphome_url(jurisdiction))
        if home.kind is not PageKind.SEARCH_FORM:
            raise PortalChanged(slug, f"CapHome answered a {home.kind.value} page")
        page = await self._post_search(talk, home, permit_number)
        row: ResultRow | None = None
        if page.kind is PageKind.RESULTS:
            row, page = await self._find_row(talk, page, permit_number)
            cap_id = row.cap_id
        elif page.kind is PageKind.DETAIL:
            # One match: ACA redirects straight to the record; its form action has the capIDs.
            form = parse_form(page.html)
            cap_id = cap_id_from_url(form.action) if form is not None else None
        elif page.kind is PageKind.NO_RESULTS:
            raise NotFoundAtSource(slug, f"no record {permit_number}")
        elif page.kind is PageKind.UNKNOWN and cap_id_from_url(page.url) is not None:
            # The one-match redirect landed on a record page HTTP could not read (a shell only
            # script fills): its URL has the capIDs; `record_page` decides how to read it.
            cap_id = cap_id_from_url(page.url)
        else:
            raise PortalChanged(slug, f"search answered a {page.kind.value} page")
        if cap_id is None:
            raise PortalChanged(slug, "no capID1..3 in the record link")

        detail_url = urls.capdetail_url(
            jurisdiction, cap_id, inspections=jurisdiction.anonymous_inspections
        )
        record = await talk.record_page(self.pages, detail_url, referer=page.url)
        detail = parse_detail(record.html) if record.kind is PageKind.DETAIL else None
        if detail is None:
            raise PortalChanged(slug, f"CapDetail answered a {record.kind.value} page")
        if permit_key(detail.permit_number) != permit_key(permit_number):
            if row is None:  # the search matched one *other* record
                raise NotFoundAtSource(slug, f"no record {permit_number}")
            raise PortalChanged(slug, f"capIDs led to {detail.permit_number}")
        if not detail.status:
            raise PortalChanged(slug, "record status is empty")

        tasks, why_not = await self._processing_or_why(talk, jurisdiction, detail_url)
        inspections = None
        if jurisdiction.anonymous_inspections:
            inspections = await self._inspections(talk, record)
        where = Provenance(
            search_url=urls.caphome_url(jurisdiction),
            detail_url=detail_url,
            processing_url=urls.processing_url(jurisdiction),
            inspections_url=detail_url if inspections is not None else None,
        )
        return build_snapshot(slug, detail, row, tasks, inspections, where, why_not)

    async def _post_search(self, talk: _Conversation, home: _Page, permit_number: str) -> _Page:
        form = parse_form(home.html)
        if form is None:
            raise PortalChanged(talk.slug, "CapHome has no form")
        data = dict(form.fields)
        data.update(
            {
                "__EVENTTARGET": SEARCH_BUTTON,
                "__EVENTARGUMENT": "",
                PERMIT_NUMBER_FIELD: permit_number.strip(),
            }
        )
        action = urls.resolve(home.url, form.action or home.url)
        return await talk.page("POST", action, referer=home.url, data=data)

    async def _find_row(
        self, talk: _Conversation, page: _Page, permit_number: str
    ) -> tuple[ResultRow, _Page]:
        """The grid row with exactly this record number, paging with "Next >" if needed."""
        wanted = permit_key(permit_number)
        for _ in range(MAX_RESULT_PAGES):
            grid = parse_results(page.html)
            if grid is None:
                raise PortalChanged(talk.slug, "results page without a grid")
            for row in grid.rows:
                if permit_key(row.record_number) == wanted:
                    return row, page
            form = parse_form(page.html)
            if grid.next_target is None or form is None:
                break
            data = dict(form.fields)
            data.update({"__EVENTTARGET": grid.next_target, "__EVENTARGUMENT": ""})
            action = urls.resolve(page.url, form.action or page.url)
            page = await talk.page("POST", action, referer=page.url, data=data)
            if page.kind is not PageKind.RESULTS:
                raise PortalChanged(talk.slug, f"pager answered a {page.kind.value} page")
        raise NotFoundAtSource(talk.slug, f"no record {permit_number} among the matches")

    async def _inspections(self, talk: _Conversation, record: _Page) -> InspectionLists | None:
        """The record's inspection lists as the page's own script gets them: the served page
        carries an empty UpdatePanel, and LoadInitInspectionList() posts the refresh button
        back as an async postback; the completed grid's "Next >" links are further postbacks,
        for the completed list's own panel, whose answer carries that panel alone.
        Older pages that print the lists inline are read as they are."""
        try:
            lists = parse_inspections(record.html)
        except InspectionListError as exc:
            raise PortalChanged(talk.slug, str(exc)) from exc
        if lists is None or lists.loaded:
            return lists
        form = parse_form(record.html)
        if form is None:
            raise PortalChanged(talk.slug, "record page has no form to post the inspections back")
        fields = dict(form.fields)
        action = urls.resolve(record.url, form.action or record.url)
        target = REFRESH_TARGET
        upcoming: list[InspectionItem] = []
        completed: list[InspectionItem] = []
        for page_number in range(MAX_INSPECTION_PAGES):
            data = dict(fields)
            data.update(
                {
                    SCRIPT_MANAGER: f"{PANEL if page_number == 0 else COMPLETED_PANEL}|{target}",
                    "__EVENTTARGET": target,
                    "__EVENTARGUMENT": "",
                    "__ASYNCPOST": "true",
                }
            )
            page = await self._async_postback(talk, action, record.url, data, fields)
            if page_number == 0:
                upcoming = page.upcoming
            completed.extend(page.completed)
            if page.completed_next is None:
                break
            target = page.completed_next
        return InspectionLists(upcoming, completed)

    async def _async_postback(
        self,
        talk: _Conversation,
        action: str,
        referer: str,
        data: dict[str, str],
        fields: dict[str, str],
    ) -> InspectionLists:
        """One UpdatePanel refresh: the delta's hidden fields replace ours (the next postback
        must carry the new __VIEWSTATE), its inspection panel is parsed."""
        response = await talk.send(
            "POST",
            action,
            referer=referer,
            data=data,
            extra={"X-MicrosoftAjax": "Delta=true", "X-Requested-With": "XMLHttpRequest"},
        )
        if response.is_redirect:
            talk.redirect_target(action, response)  # raises for Login/Error
            raise PortalChanged(talk.slug, "inspection postback redirected")
        if response.status_code >= 400:
            raise PortalChanged(talk.slug, f"HTTP {response.status_code} from inspection postback")
        try:
            records = parse_delta(response.text)
        except DeltaError as exc:
            kind = classify(response.text)
            if kind in (PageKind.LOGIN, PageKind.CSRF):
                raise Blocked(
                    talk.slug, f"inspection postback answered a {kind.value} page"
                ) from exc
            if kind is PageKind.ERROR:
                raise _SessionLost(action) from exc
            raise PortalChanged(talk.slug, f"inspection postback: {exc}") from exc
        panel = None
        for item in records:
            if item.kind == "hiddenField":
                fields[item.id] = item.content
            elif item.kind == "pageRedirect":
                lowered = item.content.casefold()
                if "login.aspx" in lowered:
                    raise Blocked(talk.slug, "inspection postback redirected to Login.aspx")
                raise _SessionLost(item.content)
            elif item.kind == "error":
                raise PortalChanged(talk.slug, f"inspection postback error: {item.content[:200]}")
            elif item.kind == "updatePanel" and item.id in ANSWER_PANEL_IDS:
                panel = item.content
        if panel is None:
            raise PortalChanged(talk.slug, "inspection postback without the inspection panel")
        try:
            return parse_panel_fragment(panel)
        except InspectionListError as exc:
            raise PortalChanged(talk.slug, str(exc)) from exc

    async def _processing_or_why(
        self, talk: _Conversation, jurisdiction: Jurisdiction, referer: str
    ) -> tuple[list[ProcessingTask] | None, str | None]:
        """The workflow as the page's Processing Status tab loads it (its own request), or None
        and why when it cannot be had: the record itself was read, so the lookup still reports
        it, with its history marked unavailable rather than empty. Walls and lost sessions
        still fail the lookup (they would fail every request of it)."""
        try:
            tasks = await self._processing(talk, jurisdiction, referer)
        except (PortalChanged, RetryLater) as exc:
            return None, f"the Processing Status request failed: {exc}"
        if not tasks:
            return None, "the Processing Status tab lists no workflow tasks for this record"
        return tasks, None

    async def _processing(
        self, talk: _Conversation, jurisdiction: Jurisdiction, referer: str
    ) -> list[ProcessingTask]:
        cap_id = cap_id_from_url(referer)
        if cap_id is None:
            raise PortalChanged(talk.slug, "no capIDs for GetProcessingData")
        payload = {
            "moduleName": urls.module_of(jurisdiction),
            "capID1": cap_id.id1,
            "capID2": cap_id.id2,
            "capID3": cap_id.id3,
            "agencyCode": jurisdiction.agency_code or "",
        }
        url = urls.processing_url(jurisdiction)
        response = await talk.send(
            "POST", url, referer=referer, json=payload, extra={"X-Requested-With": "XMLHttpRequest"}
        )
        if response.is_redirect:
            talk.redirect_target(url, response)  # raises for Login/Error
            raise PortalChanged(talk.slug, "GetProcessingData redirected")
        if "json" not in response.headers.get("content-type", ""):
            kind = classify(response.text)
            if kind in (PageKind.LOGIN, PageKind.CSRF):
                raise Blocked(talk.slug, f"GetProcessingData answered a {kind.value} page")
            if kind is PageKind.MAINTENANCE:
                raise RetryLater(talk.slug, "maintenance page", reason="maintenance")
            raise PortalChanged(talk.slug, "GetProcessingData did not answer JSON")
        try:
            return parse_processing(fragment_from_json(response.content))
        except ProcessingDataError as exc:
            raise PortalChanged(talk.slug, f"GetProcessingData: {exc}") from exc


def permit_key(number: str) -> str:
    """Record numbers compare without case or spaces (dashes are significant in Accela)."""
    return "".join(number.split()).upper()


def _ms(started: float) -> float:
    return round((time.perf_counter() - started) * 1000, 1)
