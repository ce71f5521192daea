"""CapDetail.aspx: the record page (header, work location, record details, more details,
conditions). Workflow and inspections are separate parsers (`processing`, `inspections`)."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import date

from selectolax.lexbor import LexborHTMLParser, LexborNode

from permitapi.sources.aca.pages import (
    clean,
    html_tree,
    node_text,
    optional,
    parse_date,
    parse_form,
    parse_money,
)
from permitapi.sources.aca.results import CapId, cap_id_from_url


@dataclass(frozen=True, slots=True)
class DetailCondition:
    name: str
    status: str
    group: str | None
    status_date: date | None


@dataclass(slots=True)
class CapDetail:
    permit_number: str
    record_type: str | None
    status: str
    cap_id: CapId | None
    address: str | None
    parcel: str | None = None
    block: str | None = None
    lot: str | None = None
    subdivision: str | None = None
    job_value: float | None = None
    expires: date | None = None  # the header's "Expiration Date: MM/DD/YYYY"
    more_details: dict[str, str] = field(default_factory=dict)  # ASI and additional info
    description: str | None = None
    applicant: list[str] | None = None
    licensed_professional: list[str] | None = None
    conditions: list[DetailCondition] = field(default_factory=list)


_HEADER = "span#ctl00_PlaceHolderMain_{}"
# Agencies name the parcel differently ("Folio Number" in Miami-Dade style Florida counties,
# "APN" in California, "PIN" in Illinois and North Carolina); all are the parcel.
PARCEL_LABELS = ("parcel number", "parcel no.", "parcel no", "folio number", "folio", "apn", "pin")
_PARCEL_ITEM = re.compile(
    r"^(Parcel Number|Parcel No\.?|Folio Number|Folio|APN|PIN|Block|Lot|Subdivision)\s*:\s*(.*)$",
    re.IGNORECASE,
)
# The record's value lives in its custom fields under one of these labels (first found wins).
VALUATION_LABELS = (
    "job value($)", "job value", "total project value", "valuation", "construction valuation",
    "estimated cost", "estimated job value", "project valuation",
)  # fmt: skip
# ACA's own id for the header's expiry value is misspelt ("Expirtion"); both spellings are read.
_EXPIRY_SPANS = ('span[id$="_lblExpirtionDate"]', 'span[id$="_lblExpirationDate"]')
_EXPIRY = re.compile(r"Expiration Date:\s*(\d{1,2}/\d{1,2}/\d{4})", re.IGNORECASE)
MET_CONDITION_STATUSES = frozenset({"met", "condition met", "not applied", "resolved", "cleared"})


def _lines(node: LexborNode) -> list[str]:
    """Text lines of a block: ACA separates lines with <br/>, i.e. separate text nodes."""
    return [line for part in node.text(separator="\n").split("\n") if (line := clean(part))]


# Some Florida tenants print the parcel inside the work location ("FOLIO: 194912.0000",
# "STRAP: …"); such lines are parcel ids, not address lines.
_LOCATION_ID = re.compile(r"^(FOLIO|STRAP|PARCEL(?: NUMBER| NO\.?)?|APN|PIN)\s*:\s*(.*)$", re.I)


def _work_location(tree: LexborHTMLParser) -> tuple[str | None, dict[str, str]]:
    """The address, and any parcel ids the work location prints (label casefolded -> id)."""
    # `<span class="fontbold"> 21617 NE 159TH ST</span><br/> 98077 <span>*</span>`: the `*`
    # marks the primary address; lines are joined the way the results grid prints them.
    cell = tree.css_first("table#tbl_worklocation td.NotBreakWord") or tree.css_first(
        "table#tbl_worklocation td"
    )
    if cell is None:
        return None, {}
    address: list[str] = []
    ids: dict[str, str] = {}
    for line in _lines(cell):
        if line == "*":
            continue
        labelled = _LOCATION_ID.match(line)
        if labelled is not None:
            ids.setdefault(labelled.group(1).casefold(), labelled.group(2).strip())
        else:
            address.append(line.rstrip("*").strip())
    return ", ".join(address) or None, ids


def _parcel(tree: LexborHTMLParser) -> dict[str, str | None]:
    panel = tree.css_first('div[id$="_palParceList"]')
    found: dict[str, str | None] = {}
    if panel is None:
        return found
    for item in panel.css("div"):
        if len(item.css("div")) > 1:  # css() matches the node itself too
            continue  # only leaves: the outer divs repeat their children's text
        match = _PARCEL_ITEM.match(node_text(item))
        if match:
            value = match.group(2).rstrip("*").strip()
            label = match.group(1).casefold()
            found.setdefault("parcel" if label in PARCEL_LABELS else label, optional(value))
    return found


def _more_details(tree: LexborHTMLParser) -> dict[str, str]:
    """Custom-field label/value pairs in either layout ACA renders them: `div.MoreDetail_ItemCol1`
    then `…ItemCol2` (More Details), or `div.ASIReview2Columns` holding a
    `span.ACA_SmLabelBolder` label and a `span.ACA_SmLabel` value (the review layout)."""
    pairs: dict[str, str] = {}
    scope = tree.css_first("tr#TRMoreDetail") or tree.body
    if scope is None:
        return pairs
    for column in tree.css("div.ASIReview2Columns"):
        label_node = column.css_first("span.ACA_SmLabelBolder")
        value_node = column.css_first("span.ACA_SmLabel")
        key = node_text(label_node).rstrip(":").strip()
        if key and value_node is not None:
            pairs.setdefault(key, node_text(value_node))
    for label in scope.css("div.MoreDetail_ItemCol1"):
        value = label.next
        while value is not None and value.tag != "div":
            value = value.next
        if value is None or "MoreDetail_ItemCol2" not in (value.attributes.get("class") or ""):
            continue
        key = node_text(label).rstrip(":").strip()
        if key:
            pairs[key] = node_text(value)
    return pairs


def _record_blocks(tree: LexborHTMLParser) -> dict[str, list[str]]:
    """Record Details blocks (`td.td_parent_left`): heading label -> content lines."""
    blocks: dict[str, list[str]] = {}
    for cell in tree.css("td.td_parent_left"):
        heading = cell.css_first("h1 span") or cell.css_first("h1")
        if heading is None:
            continue
        label = node_text(heading).rstrip(":").strip().casefold()
        content = cell.css_first("span.ACA_SmLabel") or cell.css_first("div.block-content")
        blocks[label] = _lines(content) if content is not None else []
    return blocks


def _conditions(tree: LexborHTMLParser) -> list[DetailCondition]:
    table = tree.css_first('table[id$="_capConditions_gdvConditionList"]')
    if table is None:
        return []
    found: list[DetailCondition] = []
    for row in table.css("tr.ACA_TabRow_Odd, tr.ACA_TabRow_Even"):

        def cell(suffix: str, row: LexborNode = row) -> str:
            span = row.css_first(f'span[id$="_{suffix}"]')
            return node_text(span)

        name = cell("lblConditionName")
        if name:
            found.append(
                DetailCondition(
                    name=name,
                    status=cell("lblConditionStatus"),
                    group=optional(cell("lblConditionGroup")),
                    status_date=parse_date(cell("lblConditionStatusDate")),
                )
            )
    return found


def _expiry(tree: LexborHTMLParser) -> date | None:
    """The header's "Expiration Date": the value span where the page has one, else the text
    "Expiration Date: MM/DD/YYYY" wherever the header prints it."""
    for selector in _EXPIRY_SPANS:
        for span in tree.css(selector):
            if (found := parse_date(node_text(span))) is not None:
                return found
    match = _EXPIRY.search(node_text(tree.body))
    return parse_date(match.group(1)) if match else None


def parse_detail(html: str | LexborHTMLParser) -> CapDetail | None:
    """The record page, or None when the page has no record header."""
    tree = html_tree(html) if isinstance(html, str) else html
    number = node_text(tree.css_first(_HEADER.format("lblPermitNumber")))
    if not number:
        return None
    form = parse_form(tree)
    parcel = _parcel(tree)
    address, location_ids = _work_location(tree)
    located_parcel = next(
        (v for k, v in location_ids.items() if k != "strap" and optional(v) is not None), None
    )
    more = _more_details(tree)
    by_label = {k.casefold(): k for k in more}
    value_key = next((by_label[label] for label in VALUATION_LABELS if label in by_label), None)
    job_value = more[value_key] if value_key is not None else None
    expires = _expiry(tree)
    blocks = _record_blocks(tree)
    description = blocks.get("project description")
    return CapDetail(
        permit_number=number,
        record_type=optional(node_text(tree.css_first(_HEADER.format("lblPermitType")))),
        status=node_text(tree.css_first(_HEADER.format("lblRecordStatus"))),
        cap_id=cap_id_from_url(form.action) if form is not None else None,
        address=address,
        parcel=parcel.get("parcel") or located_parcel,
        block=parcel.get("block"),
        lot=parcel.get("lot"),
        subdivision=parcel.get("subdivision"),
        job_value=parse_money(job_value),
        expires=expires,
        more_details={k: v for k, v in more.items() if k != value_key},
        description=" ".join(description) if description else None,
        applicant=blocks.get("applicant"),
        licensed_professional=blocks.get("licensed professional"),
        conditions=_conditions(tree),
    )
