"""The ArcGIS FeatureServer `query` operation over simulated EPIC-LA cases (the subset the
adapter and common clients use). Invalid requests answer like ArcGIS: HTTP 200 with an
`{"error": {"code": 400, ...}}` envelope."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from functools import partial
from typing import Any

import orjson

from permitapi.portalsim.epicla.where import WhereError, compile_where
from permitapi.portalsim.epicla.wire import FIELDS

MAX_RECORD_COUNT = 2000
EARTH_RADIUS_M = 6_371_008.8
UNIT_METERS = {
    "esrisrunit_meter": 1.0,
    "esrisrunit_kilometer": 1000.0,
    "esrisrunit_statutemile": 1609.344,
    "esrisrunit_foot": 0.3048,
}


@dataclass(frozen=True, slots=True)
class Row:
    attributes: dict[str, Any]
    latitude: float | None
    longitude: float | None


class QueryError(ValueError):
    """Renders as the ArcGIS 400 envelope."""

    def __init__(self, detail: str) -> None:
        super().__init__(detail)
        self.detail = detail


def error_envelope(code: int, message: str, details: list[str]) -> dict[str, Any]:
    return {"error": {"code": code, "message": message, "details": details}}


def _field_list(text: str | None) -> list[str]:
    if not text or text.strip() == "*":
        return list(FIELDS)
    canonical = {name.upper(): name for name in FIELDS}
    fields = []
    for part in text.split(","):
        name = canonical.get(part.strip().upper())
        if name is None:
            raise QueryError(f"'Invalid field: {part.strip()}' parameter is invalid")
        fields.append(name)
    return fields


def _distance_m(lat1: float, lon1: float, lat2: float, lon2: float) -> float:
    p1, p2 = math.radians(lat1), math.radians(lat2)
    dp, dl = p2 - p1, math.radians(lon2 - lon1)
    h = math.sin(dp / 2) ** 2 + math.cos(p1) * math.cos(p2) * math.sin(dl / 2) ** 2
    return 2 * EARTH_RADIUS_M * math.asin(min(1.0, math.sqrt(h)))


def _spatial_filter(params: Mapping[str, str], rows: list[Row]) -> list[Row]:
    geometry = params.get("geometry")
    if not geometry:
        return rows
    if params.get("geometryType", "esriGeometryPoint") != "esriGeometryPoint":
        raise QueryError("only point geometries are supported")
    if params.get("inSR", "4326") not in ("4326", '{"wkid":4326}'):
        raise QueryError("'inSR' parameter is invalid")
    try:
        if geometry.lstrip().startswith("{"):
            parsed = orjson.loads(geometry)
            x, y = float(parsed["x"]), float(parsed["y"])
        else:
            x_text, y_text = geometry.split(",")
            x, y = float(x_text), float(y_text)
        distance = float(params.get("distance") or 0)
    except (ValueError, KeyError, TypeError, orjson.JSONDecodeError) as exc:
        raise QueryError("'geometry' parameter is invalid") from exc
    unit = UNIT_METERS.get(params.get("units", "esriSRUnit_Meter").casefold())
    if unit is None:
        raise QueryError("'units' parameter is invalid")
    limit = distance * unit
    return [
        row
        for row in rows
        if row.latitude is not None
        and row.longitude is not None
        and _distance_m(y, x, row.latitude, row.longitude) <= limit
    ]


def _statistics(text: str, rows: list[Row]) -> dict[str, Any]:
    try:
        specs = orjson.loads(text)
        assert isinstance(specs, list)
    except (orjson.JSONDecodeError, AssertionError) as exc:
        raise QueryError("'outStatistics' parameter is invalid") from exc
    attributes: dict[str, Any] = {}
    for spec in specs:
        kind = str(spec.get("statisticType", "")).lower()
        field = _field_list(str(spec.get("onStatisticField", "")))[0]
        name = spec.get("outStatisticFieldName") or f"{kind}_{field}"
        values = [r.attributes[field] for r in rows if r.attributes.get(field) is not None]
        if kind == "max":
            attributes[name] = max(values) if values else None
        elif kind == "min":
            attributes[name] = min(values) if values else None
        elif kind == "count":
            attributes[name] = len(values)
        else:
            raise QueryError("'outStatistics' parameter is invalid")
    return {
        "displayFieldName": "",
        "fields": [{"name": n, "type": "esriFieldTypeDouble", "alias": n} for n in attributes],
        "features": [{"attributes": attributes}],
    }


def _sort_key(value: Any) -> tuple[Any, ...]:
    if value is None:
        return (0,)
    return (1, value.casefold() if isinstance(value, str) else value)


def _row_key(field: str, row: Row) -> tuple[Any, ...]:
    return _sort_key(row.attributes.get(field))


def _sort(rows: list[Row], order: str | None) -> list[Row]:
    keys = []
    for part in (order or "OBJECTID").split(","):
        bits = part.split()
        if not bits:
            continue
        (field,) = _field_list(bits[0])
        descending = len(bits) > 1 and bits[1].upper() == "DESC"
        keys.append((field, descending))
    ordered = sorted(rows, key=lambda r: str(r.attributes.get("CASENUMBER")))
    for field, descending in reversed(keys):
        # NULL sorts lowest, as in SQL Server: first ascending, last descending.
        ordered.sort(key=partial(_row_key, field), reverse=descending)
    return ordered


def _web_mercator(latitude: float, longitude: float) -> dict[str, float]:
    x = longitude * 20037508.34 / 180
    y = math.log(math.tan((90 + latitude) * math.pi / 360)) * 6378137.0
    return {"x": x, "y": y}


def run_query(params: Mapping[str, str], rows: list[Row]) -> dict[str, Any]:
    """Answer one query. Raises QueryError (400 envelope) on anything invalid."""
    if params.get("f", "html").lower() not in ("json", "pjson"):
        raise QueryError("'f' parameter is invalid")
    try:
        matches = compile_where(params.get("where"), FIELDS)
        selected = [row for row in rows if matches(row.attributes)]
    except WhereError as exc:
        if exc.field:
            raise QueryError(f"'Invalid field: {exc.field}' parameter is invalid") from exc
        raise QueryError("'where' parameter is invalid") from exc
    selected = _spatial_filter(params, selected)
    if params.get("returnCountOnly", "false").lower() == "true":
        return {"count": len(selected)}
    if params.get("outStatistics"):
        return _statistics(params["outStatistics"], selected)
    fields = _field_list(params.get("outFields"))
    ordered = _sort(selected, params.get("orderByFields"))
    try:
        offset = int(params.get("resultOffset") or 0)
        count = min(int(params.get("resultRecordCount") or MAX_RECORD_COUNT), MAX_RECORD_COUNT)
    except ValueError as exc:
        raise QueryError("'resultOffset' or 'resultRecordCount' parameter is invalid") from exc
    page = ordered[offset : offset + count]
    wgs84 = params.get("outSR", "") in ("4326", '{"wkid":4326}')
    with_geometry = params.get("returnGeometry", "true").lower() == "true"
    features = []
    for row in page:
        feature: dict[str, Any] = {"attributes": {f: row.attributes.get(f) for f in fields}}
        if with_geometry and row.latitude is not None and row.longitude is not None:
            feature["geometry"] = (
                {"x": row.longitude, "y": row.latitude}
                if wgs84
                else _web_mercator(row.latitude, row.longitude)
            )
        features.append(feature)
    wkid = 4326 if wgs84 else 102100
    body: dict[str, Any] = {
        "objectIdFieldName": "OBJECTID",
        "uniqueIdField": {"name": "OBJECTID", "isSystemMaintained": True},
        "globalIdFieldName": "",
        "geometryType": "esriGeometryPoint",
        "spatialReference": {"wkid": wkid, "latestWkid": 4326 if wgs84 else 3857},
        "fields": [{"name": f, "type": FIELDS[f], "alias": f} for f in fields],
        "features": features,
    }
    if offset + count < len(ordered):
        body["exceededTransferLimit"] = True
    return body
