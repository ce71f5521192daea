"""Socrata (data.lacity.org) rows of the LADBS datasets, and the SoQL the adapter sends.

`gwh9-jnip` (Building Permits Submitted 2020 to Present): one row per permit, nulls are absent
keys, numbers are strings, dates are floating timestamps (`2024-01-09T00:00:00.000`, no zone:
publisher local time). `9w5z-rg2h` (Inspections): one row per inspection event, `permit` with
spaces or dashes, and repeated identical events loaded at different times.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from typing import Any

from permitapi.kit.plain_numbers import plain_decimal
from permitapi.sources.base import Inspection, PortalChanged
from permitapi.sources.ladbs.numbers import normalize_permit_number, permit_key

SOURCE = "ladbs"
METRES_PER_MILE = 1609.344


@dataclass(frozen=True, slots=True)
class PermitRow:
    permit_number: str
    primary_address: str | None
    zip_code: str | None
    apn: str | None
    permit_group: str | None
    permit_type: str | None
    permit_sub_type: str | None
    work_desc: str | None
    submitted_date: date | None
    issue_date: date | None
    status_desc: str | None
    status_date: date | None
    cofo_date: date | None
    valuation: float | None
    latitude: float | None
    longitude: float | None

    @property
    def address(self) -> str | None:
        """Street and ZIP as one line, the way the PCIS page title shows it."""
        parts = [p for p in (self.primary_address, self.zip_code) if p]
        return " ".join(" ".join(parts).split()) or None


def parse_floating(value: Any) -> date | None:
    """`2024-01-09T00:00:00.000` -> date(2024, 1, 9). Absent or empty -> None."""
    if value is None or value == "":
        return None
    if not isinstance(value, str):
        raise PortalChanged(SOURCE, f"floating timestamp is not a string: {value!r}")
    try:
        return datetime.fromisoformat(value.rstrip("Z")).date()
    except ValueError as exc:
        raise PortalChanged(SOURCE, f"bad floating timestamp {value!r}") from exc


def floating(day: date) -> str:
    return f"{day.isoformat()}T00:00:00.000"


def parse_number(value: Any) -> float | None:
    """Socrata sends numbers as strings; `"0"` is a real zero, absent is None."""
    if value is None or value == "":
        return None
    try:
        number = float(str(value).replace(",", ""))
    except ValueError as exc:
        raise PortalChanged(SOURCE, f"not a number: {value!r}") from exc
    return number if math.isfinite(number) else None


def _text(row: Mapping[str, Any], key: str) -> str | None:
    value = row.get(key)
    if value is None:
        return None
    text = " ".join(str(value).split())
    return text or None


def _point(row: Mapping[str, Any]) -> tuple[float | None, float | None]:
    lat, lon = parse_number(row.get("lat")), parse_number(row.get("lon"))
    geo = row.get("geolocation")
    if (lat is None or lon is None) and isinstance(geo, Mapping):
        coords = geo.get("coordinates")
        if isinstance(coords, list) and len(coords) == 2:  # GeoJSON order: lon, lat
            lon, lat = parse_number(coords[0]), parse_number(coords[1])
    return lat, lon


def parse_permit_row(row: Mapping[str, Any]) -> PermitRow:
    raw_number = row.get("permit_nbr")
    number = normalize_permit_number(str(raw_number)) if raw_number is not None else None
    if number is None:
        raise PortalChanged(SOURCE, f"gwh9-jnip row without a usable permit_nbr: {raw_number!r}")
    lat, lon = _point(row)
    apn = _text(row, "apn")
    return PermitRow(
        permit_number=number,
        primary_address=_text(row, "primary_address"),
        zip_code=_text(row, "zip_code"),
        apn=apn.replace("-", "") if apn else None,
        permit_group=_text(row, "permit_group"),
        permit_type=_text(row, "permit_type"),
        permit_sub_type=_text(row, "permit_sub_type"),
        work_desc=_text(row, "work_desc"),
        submitted_date=parse_floating(row.get("submitted_date")),
        issue_date=parse_floating(row.get("issue_date")),
        status_desc=_text(row, "status_desc"),
        status_date=parse_floating(row.get("status_date")),
        cofo_date=parse_floating(row.get("cofo_date")),
        valuation=parse_number(row.get("valuation")),
        latitude=lat,
        longitude=lon,
    )


def parse_permit_rows(payload: Any) -> list[PermitRow]:
    if not isinstance(payload, list):
        raise PortalChanged(SOURCE, "Socrata answer is not a JSON array")
    return [parse_permit_row(row) for row in payload if isinstance(row, Mapping)]


def parse_inspection_rows(payload: Any, *, permit_number: str | None = None) -> list[Inspection]:
    """Inspection rows -> `Inspection`s, newest first, identical repeats collapsed.

    The dataset has no inspection id and reloads events (the samples show the same
    (permit, date, type, result) up to four times with different `:id`s), so identical tuples
    are one event. Rows of other permits (when `permit_number` is given) are ignored.
    """
    if not isinstance(payload, list):
        raise PortalChanged(SOURCE, "Socrata answer is not a JSON array")
    wanted = permit_key(permit_number) if permit_number else None
    seen: set[tuple[str, date | None, str, str | None]] = set()
    inspections: list[Inspection] = []
    for row in payload:
        if not isinstance(row, Mapping):
            continue
        key_permit = permit_key(str(row.get("permit", "")))
        if wanted is not None and key_permit != wanted:
            continue
        kind = _text(row, "inspection") or ""
        day = parse_floating(row.get("inspection_date"))
        result = _text(row, "inspection_result")
        key = (key_permit, day, kind, result)
        if key in seen:
            continue
        seen.add(key)
        inspections.append(Inspection(type=kind, date=day, result=result))
    return sort_newest_first(inspections)


def sort_newest_first(inspections: Iterable[Inspection]) -> list[Inspection]:
    """Stable sort by date, newest first; undated entries last."""
    return sorted(inspections, key=lambda i: (i.date is None, -(i.date or date.min).toordinal()))


# -- SoQL -----------------------------------------------------------------------------------


def soql_string(value: str) -> str:
    """A SoQL string literal: single quotes, doubled inside."""
    return "'" + value.replace("'", "''") + "'"


def soql_number(value: float) -> str:
    return plain_decimal(value)


def date_range_clauses(column: str, start: date | None, end: date | None) -> list[str]:
    """Inclusive calendar-day bounds on a floating-timestamp column (end -> `< end + 1 day`)."""
    clauses = []
    if start is not None:
        clauses.append(f"{column} >= {soql_string(floating(start))}")
    if end is not None:
        clauses.append(f"{column} < {soql_string(floating(end + timedelta(days=1)))}")
    return clauses


def in_list(column: str, values: Iterable[str]) -> str:
    return f"{column} in({', '.join(soql_string(v) for v in values)})"
