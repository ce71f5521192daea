"""The saved EPIC-LA captures (tests/fixtures/epicla, origins in its README)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.support.samples import samples_dir

FIXTURES = samples_dir() / "epicla"
AIN_FILES = {
    ain: FIXTURES / f"arcgis-epicla-eaton-palisades_case-attributes_ain-{ain}.fixture.json"
    for ain in ("5829015008", "5841009012", "5842022003", "5842024014")
}
ERROR_ENVELOPE = (
    FIXTURES / "arcgis-rest_query-error-400-invalid-field_king-county-wa-service_NOT-epicla.json"
)


def load(path: Path) -> Any:
    return json.loads(path.read_text())


def feature(case: dict[str, Any]) -> dict[str, Any]:
    """A saved case (attributes + `_geometry`) as the query API returns it in `features[]`."""
    attributes = {key: value for key, value in case.items() if key != "_geometry"}
    return {"attributes": attributes, "geometry": case["_geometry"]}


def cases(ain: str) -> dict[str, dict[str, Any]]:
    return {case["CASENUMBER"]: case for case in load(AIN_FILES[ain])["epic_cases"]}


def query_response(*saved: dict[str, Any], exceeded: bool = False) -> dict[str, Any]:
    body: dict[str, Any] = {
        "objectIdFieldName": "OBJECTID",
        "spatialReference": {"wkid": 4326, "latestWkid": 4326},
        "features": [feature(case) for case in saved],
    }
    if exceeded:
        body["exceededTransferLimit"] = True
    return body
