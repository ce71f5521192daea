"""Parser of the PCIS "Permit and Inspection Report Detail" page (`PcisPermitDetail`).

Pure functions over saved HTML (tested on tests/fixtures/ladbs). Structure, from real pages:
a `dl.dl-horizontal` of `<dt>`/`<dd>` fields (whitespace-padded; banners such as
"Pre - Inspection only…" may sit inside the `<dl>`), then `<h3>` section titles each followed by
a `table` whose rows are `<td>` cells or one `No Data Available.` cell of any colspan.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import date, datetime

from selectolax.lexbor import LexborHTMLParser, LexborNode

from permitapi.sources.base import NotFoundAtSource, PortalChanged, RetryLater

SOURCE = "ladbs"
DETAIL_TITLE = "permit and inspection report detail"
MAINTENANCE_TEXT = "service not available at this time"
NO_DATA = "no data available."

_DATE = re.compile(r"\b(\d{1,2})/(\d{1,2})/(\d{4})\b")
_ISSUED_ON = re.compile(r"issued\s+on\s+(\d{1,2}/\d{1,2}/\d{4})", re.IGNORECASE)
# "<status> on M/D/YYYY", "<status> on" (no date), or "<status>"
_STATUS_ON = re.compile(r"^(?P<status>.*?)(?:\s+on(?:\s+(?P<date>\d{1,2}/\d{1,2}/\d{4}))?)?$")


@dataclass(frozen=True, slots=True)
class PcisContact:
    role: str
    name: str
    address: str | None


@dataclass(frozen=True, slots=True)
class PcisHistoryEvent:
    event: str
    date: date | None
    person: str | None


@dataclass(frozen=True, slots=True)
class PcisClearance:
    name: str
    status: str  # "Cleared" / "Not Cleared" as published
    date: date | None
    responsible: str | None  # department while outstanding, the clearing person once cleared


@dataclass(frozen=True, slots=True)
class PcisInspection:
    type: str
    date: date | None
    result: str | None
    inspector: str | None


@dataclass(frozen=True, slots=True)
class PcisPending:
    type: str
    date: date | None


@dataclass(slots=True)
class PcisDetail:
    """Everything the detail page shows, as published (whitespace tidied, dates parsed)."""

    permit_number: str
    address: str | None
    fields: dict[str, str]  # every <dt>/<dd> pair, label -> value
    plan_check_number: str | None
    group: str | None
    permit_type: str | None
    sub_type: str | None
    primary_use: str | None
    work_description: str | None
    issued: bool
    issued_date: date | None
    current_status: str
    current_status_date: date | None
    issuing_office: str | None
    certificate_of_occupancy: str | None
    banners: list[str] = field(default_factory=list)
    history: list[PcisHistoryEvent] = field(default_factory=list)
    clearances: list[PcisClearance] = field(default_factory=list)
    contacts: list[PcisContact] = field(default_factory=list)
    inspectors: list[str] = field(default_factory=list)
    pending: list[PcisPending] = field(default_factory=list)
    inspections: list[PcisInspection] = field(default_factory=list)
    sections: set[str] = field(default_factory=set)  # section titles present on the page


def clean(text: str | None) -> str:
    """Collapse NBSP, CR/LF runs and padding to single spaces."""
    if text is None:
        return ""
    return re.sub(r"\s+", " ", text.replace("\xa0", " ")).strip()


def parse_us_date(text: str | None) -> date | None:
    """`7/6/2016` or `03/06/2026` -> date; None when no date is present."""
    match = _DATE.search(text or "")
    if match is None:
        return None
    month, day, year = (int(part) for part in match.groups())
    try:
        return date(year, month, day)
    except ValueError:
        return None


def _label_key(label: str) -> str:
    return clean(label).casefold()


def split_current_status(text: str) -> tuple[str, date | None]:
    """`Permit Finaled on 8/8/2018` -> ("Permit Finaled", 2018-08-08); `Issued on` -> no date."""
    value = clean(text)
    match = _STATUS_ON.match(value)
    if match is None:  # pragma: no cover - the pattern matches any string
        return value, None
    return match.group("status").strip(), parse_us_date(match.group("date"))


def _fields(dl: LexborNode) -> tuple[dict[str, str], list[str]]:
    fields: dict[str, str] = {}
    banners: list[str] = []
    label: str | None = None
    for child in dl.iter():
        if child.tag == "dt":
            label = clean(child.text(deep=True))
        elif child.tag == "dd" and label is not None:
            fields[label] = clean(child.text(deep=True))
            label = None
        elif child.tag in ("h1", "h2", "h3", "h4", "p", "div"):
            text = clean(child.text(deep=True))
            if text:
                banners.append(text)
    return fields, banners


def _section_rows(page: LexborHTMLParser) -> dict[str, list[list[str]]]:
    """Section title -> data rows (lists of cell texts); placeholder rows are dropped."""
    sections: dict[str, list[list[str]]] = {}
    for heading in page.css("h3"):
        title = clean(heading.text(deep=True))
        table = heading.next
        while table is not None and table.tag not in ("table", "h3"):
            table = table.next
        if table is None or table.tag != "table":
            continue
        rows: list[list[str]] = []
        for tr in table.css("tr"):
            cells = [clean(td.text(deep=True)) for td in tr.css("td")]
            if not cells or (len(cells) == 1 and cells[0].casefold() == NO_DATA):
                continue
            rows.append(cells)
        sections[title.casefold()] = rows
    return sections


def _cell(cells: list[str], index: int) -> str | None:
    return cells[index] or None if index < len(cells) else None


def _optional(fields: dict[str, str], label: str) -> str | None:
    for key, value in fields.items():
        if _label_key(key) == label:
            return value or None
    return None


def page_kind(html: str) -> str:
    """`maintenance`, `detail` (a detail page, possibly the not-found shell) or `other`."""
    page = LexborHTMLParser(html)
    body = clean(page.body.text(deep=True) if page.body else "").casefold()
    if MAINTENANCE_TEXT in body:
        return "maintenance"
    title = page.css_first("title")
    if title is not None and clean(title.text()).casefold() == DETAIL_TITLE:
        return "detail"
    return "other"


def parse_permit_detail(html: str, *, permit_number: str | None = None) -> PcisDetail:
    """Parse one PcisPermitDetail page.

    Raises RetryLater(maintenance) on the "Service not available at this time" page,
    NotFoundAtSource on the detail shell served for unknown numbers (no permit fields and no
    Contact Information block), PortalChanged on any other page.
    """
    kind = page_kind(html)
    wanted = permit_number or "permit"
    if kind == "maintenance":
        raise RetryLater(SOURCE, "PCIS says service not available", reason="maintenance")
    if kind != "detail":
        raise PortalChanged(SOURCE, f"{wanted}: not a PcisPermitDetail page")
    page = LexborHTMLParser(html)
    dl = page.css_first("dl.dl-horizontal")
    fields, banners = _fields(dl) if dl is not None else ({}, [])
    sections = _section_rows(page)
    number = _optional(fields, "application / permit")
    if number is None:
        if "contact information" not in sections:
            raise NotFoundAtSource(SOURCE, f"{wanted}: PCIS has no such permit")
        raise PortalChanged(SOURCE, f"{wanted}: detail page without an Application / Permit field")
    status_text = _optional(fields, "current status")
    if status_text is None:
        raise PortalChanged(SOURCE, f"{number}: detail page without a Current Status")
    status, status_date = split_current_status(status_text)
    issued_text = _optional(fields, "permit issued") or ""
    issued_match = _ISSUED_ON.search(issued_text)
    title = page.css_first("h5.title")
    return PcisDetail(
        permit_number=number,
        address=clean(title.text(deep=True)) or None if title is not None else None,
        fields=fields,
        plan_check_number=_optional(fields, "plan check / job no."),
        group=_optional(fields, "group"),
        permit_type=_optional(fields, "type"),
        sub_type=_optional(fields, "sub-type"),
        primary_use=_optional(fields, "primary use"),
        work_description=_optional(fields, "work description"),
        issued=issued_match is not None or issued_text.casefold().startswith("yes"),
        issued_date=parse_us_date(issued_match.group(1)) if issued_match else None,
        current_status=status,
        current_status_date=status_date,
        issuing_office=_optional(fields, "issuing office"),
        certificate_of_occupancy=_optional(fields, "certificate of occupancy"),
        banners=banners,
        history=[
            PcisHistoryEvent(cells[0], parse_us_date(_cell(cells, 1)), _cell(cells, 2))
            for cells in sections.get("permit application status history", [])
        ],
        clearances=[
            PcisClearance(
                cells[0], _cell(cells, 1) or "", parse_us_date(_cell(cells, 2)), _cell(cells, 3)
            )
            for cells in sections.get("permit application clearance information", [])
        ],
        contacts=[
            PcisContact(cells[0], _cell(cells, 1) or "", _cell(cells, 2))
            for cells in sections.get("contact information", [])
        ],
        inspectors=[
            cells[0]
            for cells in sections.get("inspector information", [])
            if not cells[0].casefold().startswith("office hours")
        ],
        pending=[
            PcisPending(cells[0], parse_us_date(_cell(cells, 1)))
            for cells in sections.get("pending inspections", [])
        ],
        inspections=[
            PcisInspection(
                cells[0], parse_us_date(_cell(cells, 1)), _cell(cells, 2), _cell(cells, 3)
            )
            for cells in sections.get("inspection request history", [])
        ],
        sections=set(sections),
    )


def as_date(moment: date | datetime | None) -> date | None:
    if isinstance(moment, datetime):
        return moment.date()
    return moment
