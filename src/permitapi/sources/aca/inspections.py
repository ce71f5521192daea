"""The Inspections section of CapDetail, in the two markups ACA serves.

Current markup (ACA 9+; the issue's Florida page, public scrapers of Tampa, Berkeley, Evanston
and Denver): `div#ctl00_PlaceHolderMain_InspectionList_inspectionUpdatePanel` is empty in the
page as served; on document ready the page's script posts back
`ctl00$PlaceHolderMain$InspectionList$btnRefreshGridView` and the UpdatePanel answer holds the
lists. Captions read "Upcoming (N)" / "Completed (N)"; an empty list reads "You have not added
any inspections." (or "There are no completed inspections on this record."). Rows are
`tr.InspectionListRow` of `table#…_gvListUpcoming` / `…_gvListCompleted`; each row's first cell
has spans: the result (`Approved`), the type and id (`PLB-Final (7958165)`) and
`Result by: <inspector> on MM/DD/YYYY at HH:MM AM`. The completed grid pages five rows at a
time; its `Next >` link is another postback, sent (as the page does) for the completed list's own
child panel, `…_InspectionList_completedPanel`, and answered with that panel alone (Mecklenburg
County's captured answers in tests/fixtures/aca).

Older markup (kept): `div#ctl00_PlaceHolderMain_InspectionList` with `div.ACA_Inspection_Item`
lines "{Type} ({ID}) - {Status} {Date}" and an optional "Inspector: …" line.
"""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass

from selectolax.lexbor import LexborHTMLParser, LexborNode

from permitapi.sources.aca.pages import clean, html_tree, node_text, parse_date

SECTION = "div#ctl00_PlaceHolderMain_InspectionList"
PANEL_ID = "ctl00_PlaceHolderMain_InspectionList_inspectionUpdatePanel"
# The UpdatePanel's UniqueID (the script-manager field names it) and the refresh trigger the
# page's LoadInitInspectionList() posts back.
PANEL = "ctl00$PlaceHolderMain$InspectionList$inspectionUpdatePanel"
REFRESH_TARGET = "ctl00$PlaceHolderMain$InspectionList$btnRefreshGridView"
# The child UpdatePanel around the completed list: the grid's pager links post back for it, and
# the answer's updatePanel record carries only it (no upcoming list).
COMPLETED_PANEL = "ctl00$PlaceHolderMain$InspectionList$completedPanel"
COMPLETED_PANEL_ID = "ctl00_PlaceHolderMain_InspectionList_completedPanel"
# The updatePanel records of an inspection postback's answer that hold a list.
ANSWER_PANEL_IDS = (PANEL_ID, COMPLETED_PANEL_ID)
SCRIPT_MANAGER = "ctl00$ScriptManager1"
EMPTY_TEXTS = ("you have not added any inspections", "there are no")

_ITEM = re.compile(r"^(?P<type>.+)\s\((?P<id>[^()]+)\)\s-\s(?P<rest>.+)$")
_TRAILING_DATE = re.compile(r"^(?P<status>.*?)\s*(?P<date>\d{1,2}/\d{1,2}/\d{4}|TBD)?$")
_TYPE_AND_ID = re.compile(r"^(?P<type>.+?)\s*\((?P<id>[^()]+)\)$")
_BY = re.compile(
    r"^(?P<what>[A-Za-z ]*?)\s*by:\s*(?P<who>.*?)\s+on\s+(?P<date>\d{1,2}/\d{1,2}/\d{4})"
    r"(?:\s+at\s+(?P<time>\d{1,2}:\d{2}\s*[AP]M))?",
    re.IGNORECASE,
)
_DATE = re.compile(r"\d{1,2}/\d{1,2}/\d{4}")
_POSTBACK = re.compile(r"__doPostBack\('([^']+)'")


@dataclass(frozen=True, slots=True)
class InspectionItem:
    type: str
    inspection_id: str
    status: str
    date: dt.date | None
    inspector: str | None
    time: dt.time | None = None


@dataclass(frozen=True, slots=True)
class InspectionLists:
    upcoming: list[InspectionItem]
    completed: list[InspectionItem]
    # __EVENTTARGET of the completed grid's active "Next >" link; None on its last page.
    completed_next: str | None = None
    # False: the page carries the panel but not its lists (they come by the postback).
    loaded: bool = True


class InspectionListError(ValueError):
    """An inspection row or line does not read the way ACA prints one."""


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


def _older(section: LexborNode) -> InspectionLists:
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


def _time(text: str | None) -> dt.time | None:
    if not text:
        return None
    try:
        return dt.datetime.strptime(clean(text).upper().replace(" ", ""), "%I:%M%p").time()
    except ValueError:
        return None


def _row(row: LexborNode) -> InspectionItem:
    cell = row.css_first("td.ACA_Width45em") or row.css_first("td")
    spans = [text for span in (cell.css("span") if cell else []) if (text := node_text(span))]
    kind = next((m for s in spans if (m := _TYPE_AND_ID.match(s)) and "by:" not in s), None)
    if kind is None:
        raise InspectionListError(f"no 'Type (ID)' in inspection row {spans!r}")
    type_span = kind.group(0)
    status = next((s for s in spans if s != type_span and not _BY.match(s)), "")
    by = next((m for s in spans if (m := _BY.match(s))), None)
    when: dt.date | None = None
    inspector: str | None = None
    at: dt.time | None = None
    if by is not None:
        who = clean(by.group("who"))
        inspector = None if who.upper() in ("", "TBD") else who
        when, at = parse_date(by.group("date")), _time(by.group("time"))
    else:
        found = _DATE.search(" ".join(s for s in spans if s != type_span))
        when = parse_date(found.group(0)) if found else None
    return InspectionItem(
        type=kind.group("type").strip(),
        inspection_id=kind.group("id").strip(),
        status=status,
        date=when,
        inspector=inspector,
        time=at,
    )


def _grid(panel: LexborNode, name: str) -> tuple[list[InspectionItem], str | None, bool]:
    """Rows of one grid, its Next > target, and whether the list was rendered at all."""
    table = panel.css_first(f'table[id$="_InspectionList_gvList{name}"]')
    if table is None:
        # Suffix match: Hillsborough County's page (tests/fixtures/aca) ids the upcoming block
        # `ctl00_PlaceHolderMain_InspectionList_divInspectionListUpcoming` but the completed
        # one plain `divInspectionListCompleted`.
        block = panel.css_first(f'div[id$="divInspectionList{name}"]')
        text = node_text(block).casefold() if block is not None else ""
        return [], None, any(marker in text for marker in EMPTY_TEXTS)
    items = [_row(row) for row in table.css("tr.InspectionListRow")]
    following = None
    for link in table.css("tr.ACA_Table_Pages a"):
        if node_text(link).casefold().startswith("next"):
            match = _POSTBACK.search(link.attributes.get("href") or "")
            following = match.group(1) if match else None
    return items, following, True


def parse_inspection_panel(panel: LexborNode) -> InspectionLists:
    upcoming, _, upcoming_shown = _grid(panel, "Upcoming")
    completed, following, completed_shown = _grid(panel, "Completed")
    return InspectionLists(upcoming, completed, following, loaded=upcoming_shown or completed_shown)


def parse_inspections(html: str | LexborHTMLParser) -> InspectionLists | None:
    """Both lists, or None when the page carries no inspections section in either markup."""
    tree = html_tree(html) if isinstance(html, str) else html
    panel = tree.css_first(f"div#{PANEL_ID}")
    if panel is not None:
        return parse_inspection_panel(panel)
    section = tree.css_first(SECTION)
    if section is None:
        return None
    return _older(section)


def parse_panel_fragment(fragment: str) -> InspectionLists:
    """The content of the delta's updatePanel record (the panel's inner HTML): the whole
    inspection panel, or the completed panel alone (then `upcoming` is empty)."""
    tree = html_tree(f'<div id="{PANEL_ID}">{fragment}</div>')
    panel = tree.css_first(f"div#{PANEL_ID}")
    assert panel is not None
    return parse_inspection_panel(panel)
