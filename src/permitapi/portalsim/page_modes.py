"""Page modes: what the real portals sometimes do to their pages, wrapped around the pages the
simulator's families already serve (no family renders anything differently).

script-only (per jurisdiction): a record page answers a shell whose script fetches the record
    page again (with `?portalsim_content=1`) and puts it in place of the shell. HTTP sees
    "Loading record..." and scripts; a browser sees the record. Record pages: Accela's
    CapDetail.aspx and LADBS's PcisPermitDetail.
drift (per jurisdiction, any number at once), applied to every 200 answer of its hosts:
    rename_label  {"target": "Status:", "to": "Case State:"}  a label's text changes
    drop_column   {"target": "valuation"}  a JSON key leaves every row (Socrata, ArcGIS
                  attributes), or an HTML table loses the column headed `target`
    layout        {"target": "table" | "dl"}  those elements become nested divs and spans

Control API (JSON; bad input is a 400 `{"error", "detail"}`):
    GET    /_control/page-modes                  {"script_only": [...], "drift": {slug: [...]}}
    POST   /_control/page-modes                  {"source": slug, "script_only": bool,
                                                  "drift": [{"kind", "target", "to"}] | null}
    DELETE /_control/page-modes                  plain pages everywhere
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit

import orjson
from selectolax.lexbor import LexborHTMLParser
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import BaseRoute, Route
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from permitapi.sources.registry import Directory, Jurisdiction

CONTENT_PARAM = "portalsim_content"
RECORD_PAGE_SUFFIXES = ("/cap/capdetail.aspx", "/pcispermitdetail")
DRIFT_KINDS = ("rename_label", "drop_column", "layout")
LAYOUT_TARGETS = ("table", "dl")

SHELL_PAGE = """<!DOCTYPE html>
<html><head><title>Loading record</title></head>
<body><div id="app" data-script-shell="1"><p>Loading record...</p></div>
<noscript>This page needs JavaScript.</noscript>
<script>
(async function () {
  var url = new URL(window.location.href);
  url.searchParams.set("portalsim_content", "1");
  var answer = await fetch(url.toString(), {credentials: "same-origin"});
  var page = new DOMParser().parseFromString(await answer.text(), "text/html");
  document.documentElement.replaceWith(document.adoptNode(page.documentElement));
})();
</script></body></html>"""


@dataclass(frozen=True, slots=True)
class Drift:
    kind: str
    target: str = ""
    to: str = ""


@dataclass(slots=True)
class PageModes:
    script_only: set[str] = field(default_factory=set)
    drift: dict[str, list[Drift]] = field(default_factory=dict)

    def active(self, slug: str) -> bool:
        return slug in self.script_only or bool(self.drift.get(slug))

    def clear(self) -> None:
        self.script_only.clear()
        self.drift.clear()

    def as_json(self) -> dict[str, Any]:
        return {
            "script_only": sorted(self.script_only),
            "drift": {
                slug: [dataclasses.asdict(item) for item in items]
                for slug, items in sorted(self.drift.items())
            },
        }


def _prefixes(directory: Directory) -> list[tuple[str, str]]:
    """(`/host/path` prefix, slug), longest first: Accela agencies share a host."""
    found: list[tuple[str, str]] = []
    for jurisdiction in directory:
        for url in _urls(jurisdiction):
            parts = urlsplit(url)
            found.append(
                (f"/{parts.netloc.lower()}{parts.path.rstrip('/').lower()}", jurisdiction.slug)
            )
    return sorted(found, key=lambda item: len(item[0]), reverse=True)


def _urls(jurisdiction: Jurisdiction) -> Iterable[str]:
    yield jurisdiction.portal_base_url
    yield from (url for url in jurisdiction.endpoints.values() if "://" in url)


class PageModeMiddleware:
    """Applies `PageModes` to the portal answers of the jurisdictions they name."""

    def __init__(self, app: ASGIApp, directory: Directory, modes: PageModes) -> None:
        self.app = app
        self.modes = modes
        self.prefixes = _prefixes(directory)

    def slug_of(self, path: str) -> str | None:
        lowered = path.lower()
        for prefix, slug in self.prefixes:
            if lowered == prefix or lowered.startswith(prefix + "/"):
                return slug
        return None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["path"].startswith("/_control"):
            await self.app(scope, receive, send)
            return
        slug = self.slug_of(scope["path"])
        if slug is None or not self.modes.active(slug):
            await self.app(scope, receive, send)
            return
        query = parse_qsl(scope.get("query_string", b"").decode("latin-1"), keep_blank_values=True)
        content = any(name == CONTENT_PARAM for name, _ in query)
        if content:
            kept = urlencode([(k, v) for k, v in query if k != CONTENT_PARAM])
            scope = {**scope, "query_string": kept.encode("latin-1")}
        shell = (
            slug in self.modes.script_only
            and not content
            and scope["method"] == "GET"
            and scope["path"].lower().endswith(RECORD_PAGE_SUFFIXES)
        )
        drifts = self.modes.drift.get(slug, [])
        if not shell and not drifts:
            await self.app(scope, receive, send)
            return
        start, body = await _captured(self.app, scope, receive)
        if start is None:
            return
        headers = [(k, v) for k, v in start["headers"] if k.lower() != b"content-length"]
        media = dict(headers).get(b"content-type", b"").decode("latin-1")
        if start["status"] == 200 and "html" in media:
            body = SHELL_PAGE.encode() if shell else drift_html(body.decode(), drifts).encode()
        elif start["status"] == 200 and "json" in media and drifts:
            body = drift_json(body, drifts)
        headers.append((b"content-length", str(len(body)).encode()))
        await send({"type": "http.response.start", "status": start["status"], "headers": headers})
        await send({"type": "http.response.body", "body": body})


async def _captured(app: ASGIApp, scope: Scope, receive: Receive) -> tuple[Message | None, bytes]:
    start: Message | None = None
    chunks: list[bytes] = []

    async def keep(message: Message) -> None:
        nonlocal start
        if message["type"] == "http.response.start":
            start = message
        elif message["type"] == "http.response.body":
            chunks.append(message.get("body", b""))

    await app(scope, receive, keep)
    return start, b"".join(chunks)


# -- drift ---------------------------------------------------------------------------------------
def drift_html(html: str, drifts: Iterable[Drift]) -> str:
    for item in drifts:
        if item.kind == "rename_label":
            html = _rename_label(html, item.target, item.to)
        elif item.kind == "drop_column":
            html = _drop_html_column(html, item.target)
        elif item.kind == "layout":
            html = _relayout(html, item.target or "table")
    return html


def _rename_label(html: str, label: str, to: str) -> str:
    """`label` at the start of an element's text becomes `to`."""

    def renamed(match: re.Match[str]) -> str:
        return f">{match[1]}{to}"

    return re.sub(r">(\s*)" + re.escape(label), renamed, html)


def _drop_html_column(html: str, header: str) -> str:
    tree = LexborHTMLParser(html)
    changed = False
    wanted = header.casefold().strip()
    for table in tree.css("table"):
        rows = table.css("tr")
        heads = rows[0].css("th, td") if rows else []
        index = next(
            (i for i, cell in enumerate(heads) if cell.text(strip=True).casefold() == wanted), None
        )
        if index is None:
            continue
        for row in rows:
            cells = row.css("th, td")
            if index < len(cells):
                cells[index].decompose()
                changed = True
    return (tree.html or html) if changed else html


_LAYOUT = {
    "table": [
        (r"<table\b", '<div class="grid"'),
        (r"</table>", "</div>"),
        (r"<t(?:body|head)\b[^>]*>|</t(?:body|head)>", ""),
        (r"<tr\b", '<div class="row"'),
        (r"</tr>", "</div>"),
        (r"<t[dh]\b", '<span class="cell"'),
        (r"</t[dh]>", "</span>"),
    ],
    "dl": [
        (r"<dl\b", '<div class="fields"'),
        (r"</dl>", "</div>"),
        (r"<dt\b", '<span class="name"'),
        (r"</dt>", "</span>"),
        (r"<dd\b", '<span class="value"'),
        (r"</dd>", "</span>"),
    ],
}


def _relayout(html: str, target: str) -> str:
    for pattern, replacement in _LAYOUT.get(target, []):
        html = re.sub(pattern, replacement, html, flags=re.IGNORECASE)
    return html


def drift_json(body: bytes, drifts: Iterable[Drift]) -> bytes:
    dropped = [item.target for item in drifts if item.kind == "drop_column"]
    if not dropped:
        return body
    try:
        value = orjson.loads(body)
    except orjson.JSONDecodeError:
        return body
    rows: list[Any] = []
    if isinstance(value, list):
        rows = value
    elif isinstance(value, dict) and isinstance(value.get("features"), list):
        rows = [f.get("attributes") for f in value["features"] if isinstance(f, dict)]
    for row in rows:
        if isinstance(row, dict):
            for name in dropped:
                row.pop(name, None)
    return orjson.dumps(value)


# -- control API ---------------------------------------------------------------------------------
class PageModeControl:
    def __init__(self, directory: Directory, modes: PageModes) -> None:
        self.directory = directory
        self.modes = modes

    def routes(self) -> list[BaseRoute]:
        return [Route("/_control/page-modes", self.handle, methods=["GET", "POST", "DELETE"])]

    async def handle(self, request: Request) -> Response:
        if request.method == "DELETE":
            self.modes.clear()
        elif request.method == "POST":
            try:
                body = await request.json()
            except ValueError:
                return _problem("invalid_json", "the body must be a JSON object")
            error = self.apply(body)
            if error is not None:
                return error
        return JSONResponse(self.modes.as_json())

    def apply(self, body: Any) -> Response | None:
        if not isinstance(body, dict):
            return _problem("invalid_json", "the body must be a JSON object")
        unknown = set(body) - {"source", "script_only", "drift"}
        if unknown:
            return _problem("invalid_field", f"unknown fields {sorted(unknown)}")
        source = body.get("source")
        jurisdiction = self.directory.get(source) if isinstance(source, str) else None
        if jurisdiction is None:
            return _problem("invalid_source", "source must be a known jurisdiction slug")
        script_only = body.get("script_only")
        if script_only is not None and not isinstance(script_only, bool):
            return _problem("invalid_script_only", "script_only must be true or false")
        drifts = _parse_drifts(body.get("drift"))
        if isinstance(drifts, Response):
            return drifts
        if script_only is True:
            self.modes.script_only.add(jurisdiction.slug)
        elif script_only is False:
            self.modes.script_only.discard(jurisdiction.slug)
        if "drift" in body:
            self.modes.drift[jurisdiction.slug] = drifts
        return None


def _parse_drifts(raw: Any) -> list[Drift] | Response:
    if raw is None:
        return []
    if not isinstance(raw, list):
        return _problem("invalid_drift", "drift must be a list of {kind, target, to}")
    found: list[Drift] = []
    for item in raw:
        if not isinstance(item, dict) or set(item) - {"kind", "target", "to"}:
            return _problem("invalid_drift", "each drift is an object {kind, target, to}")
        kind, target, to = item.get("kind"), item.get("target", ""), item.get("to", "")
        if kind not in DRIFT_KINDS:
            return _problem("invalid_drift", f"kind must be one of {list(DRIFT_KINDS)}")
        if not isinstance(target, str) or not isinstance(to, str):
            return _problem("invalid_drift", "target and to must be strings")
        if kind in ("rename_label", "drop_column") and not target.strip():
            return _problem("invalid_drift", f"{kind} needs a target")
        if kind == "layout" and (target or "table") not in LAYOUT_TARGETS:
            return _problem("invalid_drift", f"layout target must be one of {list(LAYOUT_TARGETS)}")
        found.append(Drift(kind, target, to))
    return found


def _problem(error: str, detail: str) -> JSONResponse:
    return JSONResponse({"error": error, "detail": detail}, status_code=400)
