"""The CapHome results grid: rows, the capIDs behind each row's link, the caption and pager."""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass
from urllib.parse import parse_qsl, urlsplit

from selectolax.lexbor import LexborHTMLParser, LexborNode

from permitapi.sources.aca.pages import GRID_ID, by_id_suffix, html_tree, node_text, parse_date


@dataclass(frozen=True, slots=True)
class CapId:
    """Accela's internal record id. Opaque: only ever harvested from links, never derived."""

    id1: str
    id2: str
    id3: str


def cap_id_from_url(url: str) -> CapId | None:
    """capID1..3 from a CapDetail URL, whatever the parameter order or case of the names."""
    params = {k.casefold(): v for k, v in parse_qsl(urlsplit(url).query, keep_blank_values=True)}
    parts = [params.get(f"capid{i}", "").strip() for i in (1, 2, 3)]
    if not all(parts):
        return None
    return CapId(*parts)


@dataclass(frozen=True, slots=True)
class ResultRow:
    record_number: str
    detail_url: str | None  # as written in the page (usually site-absolute path)
    cap_id: CapId | None
    date: dt.date | None  # the first column: "Date" / "Opened Date"
    record_type: str | None
    status: str | None
    address: str | None
    description: str | None
    expiration_date: dt.date | None


@dataclass(frozen=True, slots=True)
class ResultsPage:
    rows: list[ResultRow]
    first: int | None
    last: int | None
    total: int | None
    total_capped: bool  # "of 100+": ACA's display cap, not a count
    next_target: str | None  # __EVENTTARGET of an active "Next >" link; None on the last page


_SHOWING = re.compile(r"Showing\s+(\d+)\s*-\s*(\d+)\s+of\s+(\d+)(\+?)", re.IGNORECASE)
_POSTBACK = re.compile(r"__doPostBack\('([^']+)'")


def _span(row: LexborNode, suffix: str) -> str | None:
    found = by_id_suffix(row, "span", suffix)
    text = node_text(found[0]) if found else ""
    return text or None


def _row(row: LexborNode) -> ResultRow | None:
    number = _span(row, "_lblPermitNumber1") or _span(row, "_lblPermitNumber")
    if number is None:
        return None
    link = row.css_first('a[href*="CapDetail.aspx"]')
    href = link.attributes.get("href") if link is not None else None
    return ResultRow(
        record_number=number,
        detail_url=href,
        cap_id=cap_id_from_url(href) if href else None,
        date=parse_date(_span(row, "_lblUpdatedTime")),
        record_type=_span(row, "_lblType"),
        status=_span(row, "_lblStatus"),
        address=_span(row, "_lblPermitAddress") or _span(row, "_lblAddress"),
        description=_span(row, "_lblDescription"),
        expiration_date=parse_date(_span(row, "_lblExpirationDate")),
    )


def _next_target(grid: LexborNode) -> str | None:
    # "Next >" is a link while there are more pages and a plain span on the last one.
    for link in grid.css("td.aca_pagination_PrevNext a"):
        if node_text(link).casefold().startswith("next"):
            match = _POSTBACK.search(link.attributes.get("href") or "")
            if match:
                return match.group(1)
    return None


def parse_results(html: str | LexborHTMLParser) -> ResultsPage | None:
    """The grid on a CapHome page, or None when the page has no grid."""
    tree = html_tree(html) if isinstance(html, str) else html
    grid = tree.css_first(f"table#{GRID_ID}")
    if grid is None:
        return None
    rows = [
        parsed
        for row in grid.css("tr.ACA_TabRow_Odd, tr.ACA_TabRow_Even")
        if (parsed := _row(row)) is not None
    ]
    match = _SHOWING.search(node_text(grid))
    first = last = total = None
    capped = False
    if match:
        first, last, total = int(match.group(1)), int(match.group(2)), int(match.group(3))
        capped = match.group(4) == "+"
    return ResultsPage(rows, first, last, total, capped, _next_target(grid))
