"""Pure parsers for the EPIC-LA ArcGIS FeatureServer query API (EPIC-LA_Case_History_view).

Wire facts (research/portals.md §2.3 and tests/fixtures/epicla, where the samples win):
- a query answers `{"features": [{"attributes": {...}, "geometry": {"x", "y"}}], ...}` and sets
  `exceededTransferLimit: true` when more rows exist past the page;
- failures come back as HTTP 200 with `{"error": {"code", "message", "details"}}`;
- dates are epoch milliseconds at 08:00 UTC, i.e. local midnight at a *fixed* UTC-8 offset,
  also in summer (PDT): the calendar date is the date at UTC-8, not at UTC or at LA local time;
- `MAIN_ADDRESS` has a leading space; `PROJECTNAME` is cut at 50 characters while
  `PROJECT_NAME` holds the full text; `DESCRIPTION` is sometimes a `\\n`-separated numbered list
  whose lines carry trailing spaces; `PERMIT_VALUATION` is a number; `MAIN_AIN` a 10-digit AIN.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta, timezone
from typing import Any

import orjson

from permitapi.sources.base import Blocked, PortalChanged, RetryLater

SOURCE = "epicla"
# The layer stores dates as midnight at a fixed UTC-8 offset (08:00 UTC all year round).
LAYER_OFFSET = timezone(timedelta(hours=-8))
WGS84_WKIDS = frozenset({4326})


@dataclass(frozen=True, slots=True)
class ArcGisCase:
    """One EPIC-LA case as the layer publishes it, cleaned but not interpreted."""

    object_id: int | None
    case_number: str
    case_id: str | None  # EnerGov CaseId; only some layers (Eaton/Palisades) publish it
    module: str | None  # PermitManagement | PlanManagement
    case_name: str | None  # EnerGov case type, e.g. "Unincorporated Building Residential"
    workclass: str | None
    status: str
    description: str | None
    project_name: str | None
    address: str | None
    parcel: str | None
    valuation: float | None
    applied: date | None
    issued: date | None
    completed: date | None
    expires: date | None
    last_inspection: date | None
    latitude: float | None
    longitude: float | None


@dataclass(frozen=True, slots=True)
class QueryPage:
    features: list[Mapping[str, Any]]
    exceeded_transfer_limit: bool
    spatial_wkid: int | None


def load_json(content: bytes, what: str) -> Any:
    """Decode a response body; a body that is not JSON means the portal changed."""
    try:
        return orjson.loads(content)
    except orjson.JSONDecodeError as exc:
        raise PortalChanged(SOURCE, f"{what}: response is not JSON ({exc})") from exc


def raise_for_error_envelope(payload: Any, what: str) -> None:
    """Turn ArcGIS's HTTP-200 error envelope into the typed error the caller acts on."""
    if not isinstance(payload, Mapping) or "error" not in payload:
        return
    error = payload["error"]
    if not isinstance(error, Mapping):
        raise PortalChanged(SOURCE, f"{what}: malformed error envelope")
    code = error.get("code")
    details = error.get("details") or []
    message = str(error.get("message") or "")
    text = "; ".join([message, *(str(d) for d in details if d)])
    if code in (498, 499, 401, 403):
        # Invalid/missing token: the layer stopped being public.
        raise Blocked(SOURCE, f"{what}: ArcGIS {code} {text}")
    if code == 429:
        raise RetryLater(SOURCE, f"{what}: ArcGIS {code} {text}", reason="throttled")
    if isinstance(code, int) and code >= 500:
        reason = "maintenance" if code == 503 else "server_error"
        raise RetryLater(SOURCE, f"{what}: ArcGIS {code} {text}", reason=reason)
    # 400 (invalid field / where) and anything unknown: our query no longer fits the layer.
    raise PortalChanged(SOURCE, f"{what}: ArcGIS {code} {text}")


def parse_query_page(payload: Any) -> QueryPage:
    raise_for_error_envelope(payload, "query")
    if not isinstance(payload, Mapping) or not isinstance(payload.get("features"), list):
        raise PortalChanged(SOURCE, "query: no `features` array")
    features = payload["features"]
    for feature in features:
        if not isinstance(feature, Mapping) or not isinstance(feature.get("attributes"), Mapping):
            raise PortalChanged(SOURCE, "query: feature without `attributes`")
    reference = payload.get("spatialReference")
    wkid = None
    if isinstance(reference, Mapping):
        wkid = reference.get("latestWkid") or reference.get("wkid")
    return QueryPage(
        features=list(features),
        exceeded_transfer_limit=payload.get("exceededTransferLimit") is True,
        spatial_wkid=wkid if isinstance(wkid, int) else None,
    )


def parse_count(payload: Any) -> int:
    raise_for_error_envelope(payload, "count")
    count = payload.get("count") if isinstance(payload, Mapping) else None
    if not isinstance(count, int) or isinstance(count, bool):
        raise PortalChanged(SOURCE, "count: no integer `count`")
    return count


def parse_statistic(payload: Any, name: str) -> Any:
    """The single value of an `outStatistics` query (None when the layer has no rows)."""
    page = parse_query_page(payload)
    if not page.features:
        return None
    attributes = page.features[0]["attributes"]
    # ArcGIS may change the case of the requested output name.
    for key, value in attributes.items():
        if key.casefold() == name.casefold():
            return value
    raise PortalChanged(SOURCE, f"statistics: no `{name}` in the answer")


def epoch_ms_to_date(value: Any) -> date | None:
    """Layer date (epoch ms) -> the local calendar date it stands for (see module docstring)."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise PortalChanged(SOURCE, f"date field is not epoch milliseconds: {value!r}")
    moment = datetime.fromtimestamp(value / 1000, tz=UTC)
    return moment.astimezone(LAYER_OFFSET).date()


def date_literal(day: date) -> str:
    """A where-clause date literal. `DATE 'd'` means d 00:00 UTC on ArcGIS Online, which is
    earlier than the row value for d (08:00 UTC): use `>= DATE 'd'` and `< DATE 'd+1'`."""
    return f"DATE '{day.isoformat()}'"


def clean_text(value: Any) -> str | None:
    if value is None:
        return None
    text = str(value).replace("\r\n", "\n").replace("\xa0", " ")
    # Trailing spaces per line are capture noise; the line breaks of numbered lists are content.
    lines = [line.rstrip() for line in text.split("\n")]
    cleaned = "\n".join(lines).strip()
    return cleaned or None


def clean_address(value: Any) -> str | None:
    if value is None:
        return None
    cleaned = re.sub(r"\s+", " ", str(value)).strip()
    return cleaned or None


def clean_parcel(value: Any) -> str | None:
    if value is None:
        return None
    if isinstance(value, int):
        return f"{value:010d}"
    digits = re.sub(r"\D", "", str(value))
    return digits or None


def parse_number(value: Any, field_name: str) -> float | None:
    if value is None or value == "":
        return None
    if isinstance(value, bool):
        raise PortalChanged(SOURCE, f"{field_name} is not a number: {value!r}")
    if isinstance(value, int | float):
        return float(value)
    try:
        return float(str(value).replace(",", "").replace("$", ""))
    except ValueError as exc:
        raise PortalChanged(SOURCE, f"{field_name} is not a number: {value!r}") from exc


def project_name(attributes: Mapping[str, Any]) -> str | None:
    """PROJECT_NAME is the full name; PROJECTNAME is a 50-character cut (or "")."""
    full = clean_address(attributes.get("PROJECT_NAME"))
    cut = clean_address(attributes.get("PROJECTNAME"))
    if full and cut and len(cut) > len(full) and cut.startswith(full):
        return cut
    return full or cut


def point(geometry: Any, spatial_wkid: int | None = 4326) -> tuple[float | None, float | None]:
    """(latitude, longitude) from a point geometry requested with outSR=4326.

    Anything that is not a WGS84 point (another spatial reference, a polygon) is "not observed"
    rather than a wrong location."""
    if not isinstance(geometry, Mapping):
        return None, None
    x, y = geometry.get("x"), geometry.get("y")
    if not isinstance(x, int | float) or not isinstance(y, int | float):
        return None, None
    if spatial_wkid is not None and spatial_wkid not in WGS84_WKIDS:
        return None, None
    if not (-180.0 <= x <= 180.0 and -90.0 <= y <= 90.0):
        return None, None
    return float(y), float(x)


def _int_or_none(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def parse_case(
    attributes: Mapping[str, Any], geometry: Any = None, spatial_wkid: int | None = 4326
) -> ArcGisCase:
    number = attributes.get("CASENUMBER")
    status = attributes.get("STATUS")
    if not isinstance(number, str) or not number.strip():
        raise PortalChanged(SOURCE, "feature without CASENUMBER")
    if status is not None and not isinstance(status, str):
        raise PortalChanged(SOURCE, f"{number}: STATUS is not text")
    latitude, longitude = point(geometry, spatial_wkid)
    case_id = attributes.get("CASEID")
    return ArcGisCase(
        object_id=_int_or_none(attributes.get("OBJECTID")),
        case_number=number.strip().upper(),
        case_id=str(case_id) if case_id else None,
        module=clean_address(attributes.get("MODULENAME")),
        case_name=clean_address(attributes.get("CASENAME")),
        workclass=clean_address(attributes.get("WORKCLASS_NAME")),
        status=(status or "").strip(),
        description=clean_text(attributes.get("DESCRIPTION")),
        project_name=project_name(attributes),
        address=clean_address(attributes.get("MAIN_ADDRESS")),
        parcel=clean_parcel(attributes.get("MAIN_AIN")),
        valuation=parse_number(attributes.get("PERMIT_VALUATION"), "PERMIT_VALUATION"),
        applied=epoch_ms_to_date(attributes.get("APPLY_DATE")),
        issued=epoch_ms_to_date(attributes.get("ISSUANCE_DATE")),
        completed=epoch_ms_to_date(attributes.get("COMPLETE_DATE")),
        expires=epoch_ms_to_date(attributes.get("EXPIRE_DATE")),
        last_inspection=epoch_ms_to_date(attributes.get("LAST_INSPECTION_DATE")),
        latitude=latitude,
        longitude=longitude,
    )


def parse_feature(feature: Mapping[str, Any], spatial_wkid: int | None = 4326) -> ArcGisCase:
    return parse_case(feature["attributes"], feature.get("geometry"), spatial_wkid)


__all__ = [
    "ArcGisCase",
    "QueryPage",
    "clean_text",
    "date_literal",
    "epoch_ms_to_date",
    "load_json",
    "parse_case",
    "parse_count",
    "parse_feature",
    "parse_query_page",
    "parse_statistic",
    "raise_for_error_envelope",
]
