"""Starlette routes serving every ACA agency under its real host and base path.

WebForms realism that the adapter must get right: a session cookie, hidden fields bound to
that session (`__EVENTVALIDATION`, `ACA_CS_FIELD`) and a `__VIEWSTATE` carrying the search,
a Referer/Origin CSRF check on every postback, the one-result redirect to CapDetail, grid
paging by postback, Error.aspx for bad session state or unknown capIDs. Tokens are HMACs of
the session id, so the simulator keeps no session table.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import secrets
from datetime import date
from urllib.parse import parse_qsl, urlsplit

import orjson
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, RedirectResponse, Response
from starlette.routing import BaseRoute, Mount, Route

from permitapi.portalsim.aca import render
from permitapi.portalsim.aca.looks import look_of
from permitapi.portalsim.aca.numbers import cap_id_of
from permitapi.portalsim.faults import render_generic_fault
from permitapi.portalsim.store import Fault, SimStore, permit_key
from permitapi.sources.base import PermitSnapshot
from permitapi.sources.registry import Directory, Jurisdiction

SESSION_COOKIE = "ASP.NET_SessionId"
_SECRET = b"portalsim-aca"
SEARCH_BUTTON = "ctl00$PlaceHolderMain$btnNewSearch"
NUMBER_FIELD = "ctl00$PlaceHolderMain$generalSearchForm$txtGSPermitNumber"
SCRIPT_MANAGER = "ctl00$ScriptManager1"
INSPECTION_PANEL = "ctl00$PlaceHolderMain$InspectionList$inspectionUpdatePanel"
COMPLETED_PANEL = "ctl00$PlaceHolderMain$InspectionList$completedPanel"
ODD_EVENT_KEYS = frozenset({"aca:sbc", "aca:ftl"})  # stray spaces/NBSP in "Marked as"/"on"


def _token(session: str, purpose: str) -> str:
    return hmac.new(_SECRET, f"{purpose}:{session}".encode(), hashlib.sha256).hexdigest()[:32]


class _Agency:
    def __init__(self, jurisdiction: Jurisdiction, store: SimStore) -> None:
        self.j = jurisdiction
        self.store = store
        base = (jurisdiction.endpoints.get("aca") or jurisdiction.portal_base_url).rstrip("/")
        parts = urlsplit(base)
        self.host = parts.netloc
        self.path = parts.path  # "/SANDIEGO" or "/CitizenAccess"
        self.module = jurisdiction.module or "Building"
        self.agency = jurisdiction.agency_code or ""
        self.generator = hashlib.sha256(self.agency.encode()).hexdigest()[:8].upper()
        self.look = look_of(jurisdiction.slug, jurisdiction.state)

    # -- helpers ---------------------------------------------------------------------------
    def hidden(self, session: str, state: dict[str, object]) -> dict[str, str]:
        blob = base64.b64encode(orjson.dumps({"m": self.module, **state})).decode()
        return {
            "__EVENTTARGET": "",
            "__EVENTARGUMENT": "",
            "__VIEWSTATE": f"/wEP{blob}",
            "__VIEWSTATEGENERATOR": self.generator,
            "__EVENTVALIDATION": _token(session, "ev"),
            "ACA_CS_FIELD": _token(session, "cs"),
        }

    def html(
        self,
        body: str,
        *,
        action: str,
        session: str | None,
        state: dict[str, object],
        title: str = "",
        status: int = 200,
    ) -> HTMLResponse:
        hidden = self.hidden(session, state) if session else None
        response = HTMLResponse(
            render.page(body, action=action, hidden=hidden, title=title), status_code=status
        )
        if session:
            response.set_cookie(SESSION_COOKIE, session, httponly=True, samesite="lax")
        return response

    @staticmethod
    def redirect(request: Request, path: str) -> RedirectResponse:
        """A redirect from a page under /Cap/ to a site-level page (Login.aspx, Error.aspx).

        Relative, as ACA writes them: it resolves the same against the real URL (what the
        adapter works with) and against the simulator URL (what a browser would see)."""
        return RedirectResponse(f"..{path}", status_code=302)

    async def fault(self, request: Request) -> Response | None:
        fault: Fault | None = self.store.on_request(self.j.slug)
        if fault is None:
            return None
        generic = await render_generic_fault(fault)  # down / timeout / slow / error
        if generic is not None or fault.mode == "slow":
            return generic
        if fault.mode == "maintenance":
            return self.html(
                render.maintenance(),
                action="./Default.aspx",
                session=None,
                state={},
                title="Scheduled Maintenance",
            )
        return self.redirect(request, "/Login.aspx?ReturnUrl=%2fCap%2fCapHome.aspx")  # blocked

    def permit_by_cap(self, cap: tuple[str, str, str]) -> PermitSnapshot | None:
        wanted = tuple(part.upper() for part in cap)
        return next((p for p in self.store.of(self.j.slug) if cap_id_of(p) == wanted), None)

    def matches(self, query: str) -> list[PermitSnapshot]:
        """ACA's general search is a prefix match on the record number; newest first."""
        key = permit_key(query)
        found = [
            p for p in self.store.of(self.j.slug) if permit_key(p.permit_number).startswith(key)
        ]
        return sorted(
            found, key=lambda p: (p.applied_date or date.min, p.permit_number), reverse=True
        )

    def same_origin(self, request: Request) -> bool:
        referer, origin = request.headers.get("referer"), request.headers.get("origin")
        if not referer or not origin:
            return False
        return urlsplit(referer).netloc == self.host and urlsplit(origin).netloc == self.host

    # -- handlers ----------------------------------------------------------------------------
    async def caphome(self, request: Request) -> Response:
        if (faulted := await self.fault(request)) is not None:
            return faulted
        module = request.query_params.get("module") or request.query_params.get("Module") or ""
        if module.casefold() != self.module.casefold():
            return self.redirect(request, "/Login.aspx")  # module not open to anonymous users
        action = f"./CapHome.aspx?module={self.module}&TabName={self.module}"
        if request.method == "GET":
            fresh = request.cookies.get(SESSION_COOKIE) or secrets.token_hex(12)
            return self.html(render.search_form(), action=action, session=fresh, state={})
        if not self.same_origin(request):
            return self.html(render.csrf_refusal(), action=action, session=None, state={})
        # urlencoded by hand: python-multipart is not a dependency of ours.
        form = dict(parse_qsl((await request.body()).decode(), keep_blank_values=True))
        session = request.cookies.get(SESSION_COOKIE)
        state = self.state(form.get("__VIEWSTATE"))
        valid = (
            session is not None
            and state is not None
            and form.get("__VIEWSTATEGENERATOR") == self.generator
            and form.get("__EVENTVALIDATION") == _token(session, "ev")
            and form.get("ACA_CS_FIELD") == _token(session, "cs")
        )
        if not valid or session is None or state is None:
            return self.redirect(request, "/Error.aspx?ErrorId=SessionExpired")
        target = form.get("__EVENTTARGET")
        if target == SEARCH_BUTTON:
            query, page_index = str(form.get(NUMBER_FIELD) or "").strip(), 0
        elif target == render.PAGER_NEXT and state.get("q"):
            query, page_index = str(state["q"]), int(str(state.get("p", 0))) + 1
        else:
            return self.redirect(request, "/Error.aspx?ErrorId=InvalidPostback")
        found = self.matches(query) if query else []
        if not found:
            return self.html(render.no_results(), action=action, session=session, state={})
        if len(found) == 1:
            cap = cap_id_of(found[0])
            return RedirectResponse(self.href(cap), status_code=302)
        rows = found[:100][page_index * render.PAGE_SIZE : (page_index + 1) * render.PAGE_SIZE]
        if not rows:
            return self.redirect(request, "/Error.aspx?ErrorId=InvalidPage")
        entries = [
            (
                p,
                render.detail_href(self.path, self.module, self.agency, cap_id_of(p)),
                "-".join(cap_id_of(found[0])),
            )  # ACA repeats the first row's RecordId
            for p in rows
        ]
        body = render.results(entries, page_index, len(found))
        return self.html(body, action=action, session=session, state={"q": query, "p": page_index})

    def href(self, cap: tuple[str, str, str]) -> str:
        return render.detail_href("", self.module, self.agency, cap).removeprefix("/Cap/")

    @staticmethod
    def state(raw: object) -> dict[str, object] | None:
        if not isinstance(raw, str) or not raw.startswith("/wEP"):
            return None
        try:
            value = orjson.loads(base64.b64decode(raw[4:], validate=True))
        except (ValueError, orjson.JSONDecodeError):
            return None
        return value if isinstance(value, dict) else None

    async def capdetail(self, request: Request) -> Response:
        if (faulted := await self.fault(request)) is not None:
            return faulted
        q = {k.casefold(): v for k, v in request.query_params.items()}
        permit = self.permit_by_cap((q.get("capid1", ""), q.get("capid2", ""), q.get("capid3", "")))
        if permit is None:
            return self.redirect(request, "/Error.aspx?ErrorId=InvalidCapID")
        session = request.cookies.get(SESSION_COOKIE) or secrets.token_hex(12)
        cap = cap_id_of(permit)
        action = "./" + self.href(cap)
        if request.method == "POST":
            return await self.inspection_postback(request, permit)
        body = render.detail(
            permit, agency_path=self.path, look=self.look, anonymous=self.j.anonymous_inspections
        )
        return self.html(body, action=action, session=session, state={"cap": "-".join(cap)})

    async def inspection_postback(self, request: Request, permit: PermitSnapshot) -> Response:
        """The UpdatePanel refresh the record page's script sends (and the completed grid's
        pager links): an async postback answered with a partial-rendering delta. Anything
        else posted to CapDetail is a full postback this simulator does not serve."""
        if not self.same_origin(request):
            return self.html(
                render.csrf_refusal(), action="./CapDetail.aspx", session=None, state={}
            )
        form = dict(parse_qsl((await request.body()).decode(), keep_blank_values=True))
        session = request.cookies.get(SESSION_COOKIE)
        state = self.state(form.get("__VIEWSTATE"))
        cap = "-".join(cap_id_of(permit))
        valid = (
            session is not None
            and state is not None
            and state.get("cap") == cap
            and form.get("__VIEWSTATEGENERATOR") == self.generator
            and form.get("__EVENTVALIDATION") == _token(session, "ev")
            and form.get("ACA_CS_FIELD") == _token(session, "cs")
        )
        is_async = (
            form.get("__ASYNCPOST") == "true"
            and request.headers.get("x-microsoftajax", "").casefold() == "delta=true"
        )
        if not is_async:
            return self.redirect(request, "/Error.aspx?ErrorId=InvalidPostback")
        if not valid or session is None or not self.j.anonymous_inspections:
            return _delta([("pageRedirect", "", f"{self.path}/Error.aspx?ErrorId=SessionExpired")])
        target = form.get("__EVENTTARGET", "")
        pages = {render.REFRESH_TARGET: 0}
        pages.update({render.completed_pager_target(k): k for k in range(1, 100)})
        # As Mecklenburg County's answers show: the refresh renders the whole inspection panel,
        # a pager link (posted for the completed list's child panel) only that child panel.
        refresh = target == render.REFRESH_TARGET
        panel_name = INSPECTION_PANEL if refresh else COMPLETED_PANEL
        if target not in pages or form.get(SCRIPT_MANAGER) != f"{panel_name}|{target}":
            return _delta([("error", "500", "Invalid postback or callback argument.")])
        if refresh:
            panel = (
                "updatePanel",
                render.INSPECTION_PANEL,
                render.inspection_panel(permit, completed_page=0),
            )
        else:
            content = render.completed_panel(permit, completed_page=pages[target])
            panel = ("updatePanel", render.COMPLETED_PANEL, content)
        hidden = self.hidden(session, {"cap": cap, "inspections": pages[target]})
        return _delta(
            [
                panel,
                *(("hiddenField", name, value) for name, value in hidden.items()),
                ("asyncPostBackTimeout", "", "90"),
            ]
        )

    async def processing(self, request: Request) -> Response:
        if (faulted := await self.fault(request)) is not None:
            return faulted
        if not self.same_origin(request):
            return self.html(
                render.csrf_refusal(), action="./CapDetail.aspx", session=None, state={}
            )
        if "json" not in request.headers.get("content-type", ""):
            return JSONResponse({"Message": "Invalid web service call"}, status_code=500)
        try:
            body = json.loads(await request.body())
            cap = (str(body["capID1"]), str(body["capID2"]), str(body["capID3"]))
        except (ValueError, KeyError, TypeError):
            return JSONResponse({"Message": "Invalid JSON primitive"}, status_code=500)
        permit = self.permit_by_cap(cap)
        if permit is None:
            return JSONResponse({"Message": "Object reference not set"}, status_code=500)
        fragment = render.processing(permit, odd_keys=self.j.slug in ODD_EVENT_KEYS)
        return JSONResponse({"d": fragment})

    async def login(self, request: Request) -> Response:
        self.store.on_request(self.j.slug)
        return self.html(render.login(), action="./Login.aspx", session=None, state={})

    async def error(self, request: Request) -> Response:
        self.store.on_request(self.j.slug)
        return self.html(
            render.error(), action="./Error.aspx", session=None, state={}, title="Error"
        )

    def routes(self) -> list[BaseRoute]:
        return [
            Route("/Cap/CapHome.aspx", self.caphome, methods=["GET", "POST"]),
            Route("/Cap/CapDetail.aspx", self.capdetail, methods=["GET", "POST"]),
            Route("/Cap/CapDetail.aspx/GetProcessingData", self.processing, methods=["POST"]),
            Route("/Login.aspx", self.login, methods=["GET"]),
            Route("/Error.aspx", self.error, methods=["GET"]),
        ]


def _delta(records: list[tuple[str, str, str]]) -> Response:
    """An ASP.NET AJAX partial-rendering answer: `length|type|id|content|` records."""
    body = "1|#||4|" + "".join(
        f"{len(content)}|{kind}|{ident}|{content}|" for kind, ident, content in records
    )
    return Response(body, media_type="text/plain", headers={"Cache-Control": "private"})


def aca_routes(store: SimStore, directory: Directory) -> list[BaseRoute]:
    mounts: list[BaseRoute] = []
    for jurisdiction in directory:
        if jurisdiction.platform != "aca":
            continue
        agency = _Agency(jurisdiction, store)
        mounts.append(Mount(f"/{agency.host}{agency.path}", routes=agency.routes()))
    return mounts
