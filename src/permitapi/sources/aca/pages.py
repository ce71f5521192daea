"""Helpers shared by the ACA parsers: text clean-up, the WebForms form, and page recognition.

Every response is classified before it is parsed, so that a login wall, a CSRF refusal, an
error or maintenance page is never read as "no results" (research/portals.md §3.8).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date, datetime
from enum import StrEnum

from selectolax.lexbor import LexborHTMLParser, LexborNode

HIDDEN_FIELDS = ("__VIEWSTATE", "__VIEWSTATEGENERATOR", "__EVENTVALIDATION", "ACA_CS_FIELD")

_SPACES = re.compile(r"\s+")


def clean(text: str | None) -> str:
    """Collapse whitespace and NBSP: ACA pads almost every value with spaces or newlines."""
    if text is None:
        return ""
    return _SPACES.sub(" ", text.replace("\xa0", " ")).strip()


def optional(text: str | None) -> str | None:
    """A cleaned value, or None for empty and ACA's `--` placeholder."""
    value = clean(text)
    return None if value in ("", "--") else value


def parse_date(text: str | None) -> date | None:
    """ACA prints MM/DD/YYYY. `TBD` (legacy migrated records) and blanks are unknown dates."""
    value = clean(text)
    if not value or value.upper() == "TBD":
        return None
    try:
        return datetime.strptime(value, "%m/%d/%Y").date()
    except ValueError:
        return None


def parse_money(text: str | None) -> float | None:
    value = clean(text).replace("$", "").replace(",", "")
    if not value or value == "--":
        return None
    try:
        return float(value)
    except ValueError:
        return None


def html_tree(html: str) -> LexborHTMLParser:
    return LexborHTMLParser(html)


def node_text(node: LexborNode | None) -> str:
    return clean(node.text()) if node is not None else ""


def by_id_suffix(tree: LexborHTMLParser | LexborNode, tag: str, suffix: str) -> list[LexborNode]:
    """Elements whose id ends with `suffix`: ACA control ids carry per-row prefixes."""
    return tree.css(f'{tag}[id$="{suffix}"]')


@dataclass(frozen=True, slots=True)
class WebForm:
    """The page's `aspnetForm`: where it posts and the hidden fields that must go back."""

    action: str
    fields: dict[str, str]

    def missing(self) -> list[str]:
        return [name for name in HIDDEN_FIELDS if name not in self.fields]


def parse_form(html: str | LexborHTMLParser) -> WebForm | None:
    """The aspnetForm action (entities decoded) and every hidden input it carries."""
    tree = html_tree(html) if isinstance(html, str) else html
    form = tree.css_first("form#aspnetForm") or tree.css_first("form")
    if form is None:
        return None
    fields: dict[str, str] = {}
    for item in form.css('input[type="hidden"]'):
        name = item.attributes.get("name")
        if name:
            fields[name] = item.attributes.get("value") or ""
    return WebForm(action=form.attributes.get("action") or "", fields=fields)


class PageKind(StrEnum):
    LOGIN = "login"
    CSRF = "csrf"
    ERROR = "error"
    MAINTENANCE = "maintenance"
    NO_RESULTS = "no_results"
    RESULTS = "results"
    DETAIL = "detail"
    SEARCH_FORM = "search_form"
    UNKNOWN = "unknown"


NO_RESULTS_TEXT = "your search returned no results"
CSRF_TEXT = "potential cross-site request forgery"
GRID_ID = "ctl00_PlaceHolderMain_dgvPermitList_gdvPermitList"
SEARCH_BUTTON = "ctl00$PlaceHolderMain$btnNewSearch"
PERMIT_NUMBER_FIELD = "ctl00$PlaceHolderMain$generalSearchForm$txtGSPermitNumber"


def classify(html: str) -> PageKind:
    """What an ACA HTML response is. Walls and errors are checked before content."""
    tree = html_tree(html)
    form = tree.css_first("form#aspnetForm") or tree.css_first("form")
    action = (form.attributes.get("action") or "") if form is not None else ""
    body = node_text(tree.body).casefold()
    title = node_text(tree.css_first("title")).casefold()
    if "login.aspx" in action.casefold() or tree.css_first("iframe#LoginFrame") is not None:
        return PageKind.LOGIN
    if CSRF_TEXT in body:
        return PageKind.CSRF
    if "error.aspx" in action.casefold() or "error" in title:
        return PageKind.ERROR
    if "maintenance" in title or "undergoing maintenance" in body:
        return PageKind.MAINTENANCE
    if tree.css_first(f"table#{GRID_ID}") is not None:
        return PageKind.RESULTS
    if tree.css_first("span#ctl00_PlaceHolderMain_lblPermitNumber") is not None:
        return PageKind.DETAIL
    if NO_RESULTS_TEXT in body:
        return PageKind.NO_RESULTS
    if form is not None and tree.css_first(f'input[name="{PERMIT_NUMBER_FIELD}"]') is not None:
        return PageKind.SEARCH_FORM
    return PageKind.UNKNOWN


@dataclass(frozen=True, slots=True)
class DeltaRecord:
    kind: str  # "updatePanel", "hiddenField", "pageRedirect", "error", ...
    id: str
    content: str


class DeltaError(ValueError):
    """The answer to an async postback is not an ASP.NET AJAX partial-rendering delta."""


def parse_delta(text: str) -> list[DeltaRecord]:
    """Records of a partial-rendering answer: `length|type|id|content|` repeated, where length
    counts the characters of content (which may itself contain `|`)."""
    records: list[DeltaRecord] = []
    position = 0
    while position < len(text):
        try:
            length_end = text.index("|", position)
            length = int(text[position:length_end])
            kind_end = text.index("|", length_end + 1)
            id_end = text.index("|", kind_end + 1)
        except ValueError as exc:
            raise DeltaError(f"malformed delta record at {position}") from exc
        start = id_end + 1
        end = start + length
        if end >= len(text) + 1 or text[end : end + 1] != "|":
            raise DeltaError(f"delta record at {position} overruns its length")
        records.append(DeltaRecord(text[length_end + 1 : kind_end], text[kind_end + 1 : id_end],
                                   text[start:end]))  # fmt: skip
        position = end + 1
    return records
