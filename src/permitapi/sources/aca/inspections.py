"""The Inspections section of CapDetail (shown with `IsToShowInspection=Y`).

Structure (research/portals.md §3.5; no real sample, see the fixture header): an Upcoming and
a Completed list; each item reads "{Type} ({ID}) - {Status} {Date}" with an optional
"Inspector: …" line. An empty list says "There are no … inspections on this record."
"""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass

from selectolax.lexbor import LexborHTMLParser

from permitapi.sources.aca.pages import clean, html_tree, node_text, parse_date

SECTION = "div#ctl00_PlaceHolderMain_InspectionList"
_ITEM = re.compile(r"^(?P<type>.+)\s\((?P<id>[^()]+)\)\s-\s(?P<rest>.+)$")
_TRAILING_DATE = re.compile(r"^(?P<status>.*?)\s*(?P<date>\d{1,2}/\d{1,2}/\d{4}|TBD)?$")


@dataclass(frozen=True, slots=True)
class InspectionItem:
    type: str
    inspection_id: str
    status: str
    date: dt.date | None
    inspector: str | None


@dataclass(frozen=True, slots=True)
class InspectionLists:
    upcoming: list[InspectionItem]
    completed: list[InspectionItem]


def _item(title: str, inspector: str | None) -> InspectionItem | None:
    match = _ITEM.match(clean(title))
    if match is None:
        return None
    rest = _TRAILING_DATE.match(match.group("rest"))
    status, when = (rest.group("status"), rest.group("date")) if rest else (match["rest"], None)
    return InspectionItem(
        type=match.group("type").strip(),
        inspection_id=match.group("id").strip(),
        status=status.strip(),
        date=parse_date(when),
        inspector=inspector,
    )


class InspectionListError(ValueError):
    """An inspection line does not read "{Type} ({ID}) - {Status} {Date}"."""


def parse_inspections(html: str | LexborHTMLParser) -> InspectionLists | None:
    """Both lists, or None when the page carries no inspections section."""
    tree = html_tree(html) if isinstance(html, str) else html
    section = tree.css_first(SECTION)
    if section is None:
        return None
    lists: dict[str, list[InspectionItem]] = {"upcoming": [], "completed": []}
    for name, items in lists.items():
        block = section.css_first(f'div[id$="_InspectionList_{name}"]')
        if block is None:
            continue
        for entry in block.css("div.ACA_Inspection_Item"):
            title = node_text(entry.css_first("span.ACA_Inspection_Title"))
            who = node_text(entry.css_first("span.ACA_Inspection_Inspector"))
            inspector = clean(who.split(":", 1)[1]) if ":" in who else None
            item = _item(title, inspector or None)
            if item is None:
                raise InspectionListError(f"unreadable inspection line {title!r}")
            items.append(item)
    return InspectionLists(lists["upcoming"], lists["completed"])
