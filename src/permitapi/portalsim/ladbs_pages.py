"""LADBS wire formats rendered from ground truth: the PCIS detail page (same structure as the
real pages in tests/fixtures/ladbs) and Socrata rows of gwh9-jnip and 9w5z-rg2h."""

from __future__ import annotations

from datetime import date
from html import escape
from typing import Any

from permitapi.portalsim.ladbs_data import _digest, chance, presentation, quirks
from permitapi.sources.base import NormalizedStatus, PermitSnapshot

GWH9_COLUMNS = frozenset(
    {":id", ":created_at", ":updated_at", "permit_nbr", "primary_address", "zip_code", "apn",
     "permit_group", "permit_type", "permit_sub_type", "business_unit", "work_desc",
     "submitted_date", "issue_date", "status_desc", "status_date", "cofo_date", "valuation",
     "lat", "lon", "geolocation", "refresh_time"}
)  # fmt: skip
INSPECTION_COLUMNS = frozenset(
    {":id", ":created_at", ":updated_at", "permit", "address", "permit_status",
     "inspection_date", "inspection", "inspection_result", "lat_lon"}
)  # fmt: skip

_HEAD = """<!DOCTYPE html>
<html lang="en">
<head>
    <meta charset="utf-8" />
    <title>Permit and Inspection Report Detail</title>
</head>
<body>
    <a accesskey="s" href="#ladbs_main" id="skiptocontent">Skip Dept Navigation to Main Content</a>
    <section role="main">
        <section id="MainWrapper" role="region" class="main_content">
<div class="container">
"""
_TAIL = """    </h5>
        </section>
        <footer id="footer" role="contentinfo" class="footer no-print">
            <p>City of Los Angeles Department of Building and Safety</p>
        </footer>
    </section>
</body>
</html>
"""


def us_date(day: date | None, *, padded: bool = False) -> str:
    if day is None:
        return ""
    return f"{day:%m/%d/%Y}" if padded else f"{day.month}/{day.day}/{day.year}"


def split_address(address: str | None) -> tuple[str | None, str | None]:
    """`3030 S MIDVALE AVE 90034` -> street, ZIP (the snapshot keeps them as one line)."""
    if not address:
        return None, None
    street, _, last = address.rpartition(" ")
    if street and last.isdigit() and len(last) == 5:
        return street, last
    return address, None


def _label(text: str, nbsp: bool) -> str:
    if nbsp:  # real pages pad labels; some carry NBSP between words
        return "\r\n                " + text.replace(" ", "&nbsp;") + "&nbsp;\r\n            "
    return f"\n                {text}\n            "


def _field(label: str, value: str, nbsp: bool) -> str:
    return f"""            <dt>{_label(label, nbsp)}</dt>
            <dd>
                {value}
            </dd>
"""


def _section(title: str, rows: list[list[str]], colspan: int) -> str:
    body = "".join(
        "                        <tr>\n"
        + "".join(f"                            <td>\n{escape(c)}\n</td>\n" for c in row)
        + "                        </tr>\n"
        for row in rows
    ) or (
        f'                    <tr>\n                        <td colspan="{colspan}">\n'
        "                            No Data Available.\n                        </td>\n"
        "                    </tr>\n"
    )
    return f"""        <h3 class="xs-fontSize">
            {title}
        </h3>
        <table class="table table-details">
            <tbody>
{body}            </tbody>
        </table>
"""


def _current_status(snapshot: PermitSnapshot) -> str:
    q = quirks(snapshot.permit_number)
    status = escape(snapshot.raw_status)
    if q.status_without_date or snapshot.status_date is None:
        return f"{status}\n                        <span>\n                            on\n</span>"
    if q.plain_status_date:
        return f"{status} on {us_date(snapshot.status_date, padded=True)}"
    return (
        f"{status}\n                        <span>\n                            on "
        f"{us_date(snapshot.status_date)}\n                        </span>"
    )


def render_detail(snapshot: PermitSnapshot) -> str:
    number = snapshot.permit_number
    q = quirks(number)
    look = presentation(snapshot)
    street, zip_code = split_address(snapshot.address)
    title = escape(f"{street or ''}    {zip_code or ''}".strip())
    parts = [
        _HEAD,
        '        <h5 class="no-print title title-full-width">\n'
        f"            {title}\n        </h5>\n",
        '        <h3 class="yes-print">\n            Certificate Information:\n'
        f"            {title}\n        </h3>\n",
        '        <dl class="dl-horizontal xs-datalist">\n',
    ]
    if snapshot.permit_type == "Grading" and snapshot.issued_date is None:
        parts.append("<h3><b>Pre - Inspection only, not a permit for construction</b></h3>\n")
    nbsp = q.nbsp_labels
    issued = f"Issued on {us_date(snapshot.issued_date)}" if snapshot.issued_date else "No"
    fields = [
        ("Application / Permit", number),
        ("Plan Check / Job No.", look.plan_check_number),
        ("Group", look.group),
        ("Type", escape(snapshot.permit_type or "")),
        ("Sub-Type", look.sub_type),
        ("Primary Use", "() "),
        ("Work Description", escape(snapshot.work_description or "")),
        ("Permit Issued", issued),
    ]
    if snapshot.issued_date:
        fields.append(("Issuing Office", look.issuing_office))
    fields.append(("Current Status", _current_status(snapshot)))
    parts.extend(_field(label, value, nbsp) for label, value in fields)
    parts.append("        </dl>\n")
    legacy = q.legacy
    history = [
        [e.status, us_date(e.changed_at if isinstance(e.changed_at, date) else None), e.actor or ""]
        for e in (snapshot.timeline or [])
    ]
    staff = ("MICHAEL BROWN", "RICHARD WOO", "RUSSELL BONVOULOIR")
    clearances = [
        [c.name, c.status, us_date(c.status_date),
         c.group or "" if not c.is_met else staff[_digest(number, c.name) % len(staff)]]
        for c in (snapshot.conditions or [])
    ]  # fmt: skip
    active = snapshot.issued_date is not None
    # the real contractor address cell carries NBSP runs (sample 16041-10000-23545)
    address = "1546 LINDA ROSA AVE\xa0\xa0   \xa0\xa0 LOS ANGELES, CA 90041"
    contacts = [] if legacy or not active else [["Contractor", look.contractor, address]]
    inspector = (
        [[look.inspector, "Office Hours: 7:00-8:00 AM MON-FRI"]] if active and not legacy else []
    )
    pending = [[p.type, us_date(p.date)] for p in snapshot.pending_inspections or []]
    inspections = [
        [i.type, us_date(i.date), i.result or "", i.inspector or ""]
        for i in snapshot.inspections or []
    ]
    parts += [
        _section(
            "Permit Application Status History", [] if legacy else history, 5 if legacy else 3
        ),
        _section("Permit Application Clearance Information", [] if legacy else clearances, 4),
        _section("Contact Information", contacts, 7),
        _section("Inspector Information", inspector, 2),
        _section("Pending Inspections", [] if legacy else pending, 4),
        _section("Inspection Request History", [] if legacy else inspections, 4),
        _TAIL,
    ]
    return "".join(parts)


def render_not_found() -> str:
    """The shell PCIS serves for an unknown number: no permit fields, no Contact Information."""
    return _HEAD + '        <h5 class="no-print title title-full-width">\n        </h5>\n' + _TAIL


MAINTENANCE_PAGE = """<!DOCTYPE html>
<html><head><title>LADBS Online Services</title></head>
<body><div class="container"><h2>Service not available at this time.</h2>
<p>Please try again later.</p></div></body></html>
"""
ACCESS_DENIED_PAGE = """<!DOCTYPE html>
<html><head><title>Access Denied</title></head>
<body><h1>Access Denied</h1><p>You don't have permission to access this resource.</p></body></html>
"""


# -- Socrata rows ------------------------------------------------------------------------------


def floating(day: date) -> str:
    return f"{day.isoformat()}T00:00:00.000"


def socrata_number(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else repr(float(value))


def permit_row(snapshot: PermitSnapshot, refreshed: date) -> dict[str, Any] | None:
    """The gwh9-jnip row of a permit, or None: the dataset holds only the Building group."""
    look = presentation(snapshot)
    if look.group != "Building":
        return None
    street, zip_code = split_address(snapshot.address)
    row: dict[str, Any] = {
        ":id": f"row-{_digest(snapshot.permit_number, 'id') % 36**8:08x}",
        ":created_at": f"{refreshed.isoformat()}T15:10:43.831Z",
        ":updated_at": f"{refreshed.isoformat()}T15:10:43.831Z",
        "permit_nbr": snapshot.permit_number,
        "primary_address": street,
        "zip_code": zip_code,
        "apn": snapshot.parcel,
        "permit_group": "Building",
        "permit_type": snapshot.permit_type,
        "permit_sub_type": look.sub_type,
        "business_unit": look.business_unit,
        "work_desc": snapshot.work_description,
        "submitted_date": floating(snapshot.applied_date) if snapshot.applied_date else None,
        "issue_date": floating(snapshot.issued_date) if snapshot.issued_date else None,
        "status_desc": snapshot.raw_status,
        "status_date": floating(snapshot.status_date) if snapshot.status_date else None,
        "cofo_date": floating(snapshot.finaled_date)
        if snapshot.finaled_date and snapshot.status is NormalizedStatus.OCCUPANCY
        else None,
        "valuation": socrata_number(snapshot.valuation) if snapshot.valuation is not None else None,
        "refresh_time": floating(refreshed),
    }
    if snapshot.latitude is not None and snapshot.longitude is not None:
        row["lat"] = repr(snapshot.latitude)
        row["lon"] = repr(snapshot.longitude)
        row["geolocation"] = {
            "type": "Point",
            "coordinates": [snapshot.longitude, snapshot.latitude],
        }
    return {k: v for k, v in row.items() if v is not None}  # Socrata omits nulls


def inspection_rows(snapshot: PermitSnapshot) -> list[dict[str, Any]]:
    """9w5z-rg2h rows, oldest first like the samples, some events loaded two to four times."""
    number = snapshot.permit_number
    spelled = number.replace("-", " ") if quirks(number).spaced_inspection_numbers else number
    rows: list[dict[str, Any]] = []
    # oldest first, same-day events in truth order (a stable newest-first sort restores it)
    events = sorted(snapshot.inspections or [], key=lambda i: i.date or date.min)
    for index, inspection in enumerate(events):
        copies = 1 + (
            _digest(number, index, "copies") % 3 + 1 if chance(f"{number}/{index}", "dup", 4) else 0
        )
        for copy in range(copies):
            row: dict[str, Any] = {
                ":id": f"row-{_digest(number, index, copy) % 36**10:010x}",
                "permit": spelled,
                "address": snapshot.address,
                "permit_status": snapshot.raw_status,
                "inspection_date": floating(inspection.date) if inspection.date else None,
                "inspection": inspection.type,
                "inspection_result": inspection.result,
            }
            rows.append({k: v for k, v in row.items() if v is not None})
    return rows
