"""ArcGIS query parameters for EPIC-LA lookups and discovery (pure; no I/O)."""

from __future__ import annotations

from datetime import date, timedelta
from typing import Any

import orjson

from permitapi.kit.plain_numbers import plain_decimal
from permitapi.sources.base import NormalizedStatus, SearchCriteria
from permitapi.sources.epicla.arcgis import date_literal
from permitapi.sources.epicla.status import raw_labels_for

METERS_PER_MILE = 1609.344
# Fields a thin discovery hit needs; a lookup asks for `*`.
SEARCH_FIELDS = (
    "OBJECTID,CASENUMBER,CASENAME,WORKCLASS_NAME,MODULENAME,STATUS,MAIN_ADDRESS,"
    "PERMIT_VALUATION,APPLY_DATE,ISSUANCE_DATE"
)
ORDER = "ISSUANCE_DATE DESC,OBJECTID"
NEWEST_ISSUE_FIELD = "NEWEST_ISSUANCE"

# Discovery's permit types, matched against the EnerGov case type (CASENAME, e.g.
# "Unincorporated Building Residential") or the work class (trade express permits).
PERMIT_TYPE_PATTERNS: dict[str, tuple[str, ...]] = {
    "building": ("Building", "Rebuild"),
    "electrical": ("Electrical",),
    "mechanical": ("Mechanical",),
    "plumbing": ("Plumbing",),
}


def sql_string(value: str) -> str:
    return "'" + value.replace("'", "''") + "'"


def _like_escape(value: str) -> str:
    # ArcGIS LIKE has no portable escape clause: drop the wildcard characters instead.
    return value.replace("%", "").replace("_", "")


def sql_number(value: float) -> str:
    """A plain decimal literal: never an exponent (`1.5e+06` is not ArcGIS SQL) and never
    rounded (`:g` keeps six digits, so 1234567.5 would become 1.23457e+06)."""
    return plain_decimal(value)


def lookup_params(case_number: str) -> dict[str, str]:
    return {
        "where": f"CASENUMBER={sql_string(case_number)}",
        "outFields": "*",
        "returnGeometry": "true",
        "outSR": "4326",
        "f": "json",
    }


def changes_params(case_numbers: list[str]) -> dict[str, str]:
    """Every history row of these cases (the latest has the highest OBJECTID), no geometry."""
    listed = ",".join(sql_string(number) for number in case_numbers)
    return {
        "where": f"CASENUMBER IN ({listed})",
        "outFields": "*",
        "returnGeometry": "false",
        "f": "json",
    }


def permit_type_clause(permit_type: str) -> str:
    words = PERMIT_TYPE_PATTERNS.get(permit_type.strip().casefold(), (permit_type.strip(),))
    parts = []
    for word in words:
        pattern = sql_string(f"%{_like_escape(word)}%")
        parts.append(f"CASENAME LIKE {pattern} OR WORKCLASS_NAME LIKE {pattern}")
    return "(" + " OR ".join(parts) + ")"


def status_clause(status: str) -> str:
    """A normalised value (`issued`, exact spelling) selects every raw label mapped to it;
    anything else is a raw portal label (`Finaled`)."""
    try:
        labels = raw_labels_for(NormalizedStatus(status.strip()))
    except ValueError:
        labels = []
    if labels:
        return "STATUS IN (" + ",".join(sql_string(label) for label in labels) + ")"
    return f"STATUS = {sql_string(status.strip())}"


def search_where(criteria: SearchCriteria) -> str:
    clauses = []
    if criteria.parcels:
        clauses.append("MAIN_AIN IN (" + ",".join(sql_string(p) for p in criteria.parcels) + ")")
    if criteria.date_from:
        clauses.append(f"ISSUANCE_DATE >= {date_literal(criteria.date_from)}")
    if criteria.date_to:
        # Row values sit at 08:00 UTC of their day, DATE literals at 00:00 UTC: an inclusive
        # upper bound is "before the next day".
        clauses.append(f"ISSUANCE_DATE < {date_literal(criteria.date_to + timedelta(days=1))}")
    if criteria.zip:
        # Best effort: the layer has no ZIP field, only the ZIP inside MAIN_ADDRESS.
        clauses.append(f"MAIN_ADDRESS LIKE {sql_string('%' + _like_escape(criteria.zip) + '%')}")
    if criteria.permit_type:
        clauses.append(permit_type_clause(criteria.permit_type))
    if criteria.value_min is not None:
        clauses.append(f"PERMIT_VALUATION >= {sql_number(criteria.value_min)}")
    if criteria.value_max is not None:
        clauses.append(f"PERMIT_VALUATION <= {sql_number(criteria.value_max)}")
    if criteria.status:
        clauses.append(status_clause(criteria.status))
    return " AND ".join(clauses) if clauses else "1=1"


def search_params(criteria: SearchCriteria) -> dict[str, str]:
    params = {
        "where": search_where(criteria),
        "outFields": SEARCH_FIELDS,
        "orderByFields": ORDER,
        "resultOffset": str(criteria.offset),
        "resultRecordCount": str(criteria.limit),
        "returnGeometry": "true",
        "outSR": "4326",
        "f": "json",
    }
    if (
        criteria.latitude is not None
        and criteria.longitude is not None
        and criteria.radius_mi is not None
    ):
        params |= {
            "geometry": f"{plain_decimal(criteria.longitude)},{plain_decimal(criteria.latitude)}",
            "geometryType": "esriGeometryPoint",
            "inSR": "4326",
            "spatialRel": "esriSpatialRelIntersects",
            "distance": f"{criteria.radius_mi * METERS_PER_MILE:.1f}",
            "units": "esriSRUnit_Meter",
        }
    return params


def freshness_params(today: date) -> dict[str, str]:
    """Newest issue date not after `today`: future-dated outliers exist in the layer."""
    statistics: list[dict[str, Any]] = [
        {
            "statisticType": "max",
            "onStatisticField": "ISSUANCE_DATE",
            "outStatisticFieldName": NEWEST_ISSUE_FIELD,
        }
    ]
    return {
        "where": f"ISSUANCE_DATE < {date_literal(today + timedelta(days=1))}",
        "outStatistics": orjson.dumps(statistics).decode(),
        "f": "json",
    }


def count_params() -> dict[str, str]:
    return {"where": "1=1", "returnCountOnly": "true", "f": "json"}
