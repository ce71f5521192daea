"""The tool catalogue as `tools/list` shows it, built in-process (no server): exactly thirteen
tools within the 16 KB budget, strict input schemas that still refuse what they refused with
the full schemas, compact output schemas that still validate the answers, annotations, and the
arguments REST's own validation decides passed through to it."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from jsonschema import Draft202012Validator
from mcp_types import ListToolsResult
from pydantic import ValidationError

from permitapi.config import Settings
from permitapi.mcp.schemas import BatchInput, SearchInput, StatusInput
from permitapi.mcp.server import ToolServer
from permitapi.sources.registry import default_directory

TOOL_NAMES = [
    "get_permit_status",
    "batch_permit_status",
    "list_jurisdictions",
    "search_permits",
    "resolve_permit",
    "get_canonical_permit",
    "get_permit_inspections",
    "get_permit_conditions",
    "get_permit_history",
    "watch_permit",
    "unwatch_permit",
    "list_watches",
    "get_operation",
]
READ_ONLY = set(TOOL_NAMES) - {"watch_permit", "unwatch_permit"}
TOOLS_LIST_BUDGET = 16 * 1024


@pytest.fixture(scope="module")
def catalogue() -> dict[str, dict[str, Any]]:
    server = ToolServer(Settings(environment="test"))
    return {
        d.name: d.model_dump(by_alias=True, exclude_none=True, mode="json")
        for d in server.definitions
    }


def test_exactly_the_thirteen_tools_in_a_stable_order(catalogue: dict[str, Any]) -> None:
    assert list(catalogue) == TOOL_NAMES


def test_tools_list_fits_the_budget(catalogue: dict[str, Any]) -> None:
    """The `tools/list` result as sent (compact JSON): at most 16 KB, where the full schemas
    and the 79-slug enum cost 46 KB. The transport tests measure the HTTP body too."""
    listed = ListToolsResult.model_validate({"tools": list(catalogue.values())})
    wire = json.dumps(
        listed.model_dump(by_alias=True, exclude_none=True, mode="json"), separators=(",", ":")
    )
    assert len(wire.encode()) <= TOOLS_LIST_BUDGET, len(wire)
    for tool in catalogue.values():
        # No slug enum, no prose in the output schemas: what made the old list expensive.
        assert "enum" not in tool["inputSchema"]["properties"].get("jurisdiction", {}) or (
            tool["name"] == "search_permits"
        )
        assert '"description":' not in json.dumps(tool["outputSchema"])


@pytest.mark.parametrize("name", TOOL_NAMES)
def test_each_tool_is_described_for_an_agent(catalogue: dict[str, Any], name: str) -> None:
    tool = catalogue[name]
    assert tool["title"]
    assert tool["annotations"]["title"] == tool["title"]
    description = tool["description"]
    assert 60 < len(description) < 600
    # What it costs, and for a tool that needs one, what to call first or next.
    assert any(word in description for word in ("credit", "search", "Free")), description
    for needs_status_first in ("get_canonical_permit", "get_permit_inspections"):
        assert "get_permit_status first" in catalogue[needs_status_first]["description"]
    assert "get_operation" in catalogue["get_permit_status"]["description"]
    schema = tool["inputSchema"]
    assert schema["type"] == "object"
    assert schema["additionalProperties"] is False
    Draft202012Validator.check_schema(schema)
    for prop in schema["properties"].values():
        assert "description" in prop
        assert "anyOf" not in prop  # optional arguments are simply omitted
    output = tool["outputSchema"]
    assert output["type"] == "object"
    Draft202012Validator.check_schema(output)
    annotations = tool["annotations"]
    assert annotations["readOnlyHint"] is (name in READ_ONLY)
    assert annotations["idempotentHint"] is True


def test_bounds_and_enums_are_advertised(catalogue: dict[str, Any]) -> None:
    batch = catalogue["batch_permit_status"]["inputSchema"]["properties"]["permit_numbers"]
    assert (batch["minItems"], batch["maxItems"]) == (1, 25)
    status = catalogue["get_permit_status"]["inputSchema"]
    assert status["required"] == ["permit_number"]
    # A slug pattern instead of the enum: every directory slug fits it.
    slug = re.compile(status["properties"]["jurisdiction"]["pattern"])
    assert all(slug.search(j.slug) for j in default_directory())
    assert "list_jurisdictions" in status["properties"]["jurisdiction"]["description"]
    search = catalogue["search_permits"]["inputSchema"]["properties"]
    assert search["jurisdiction"]["enum"] == ["ladbs", "epicla"]
    assert search["permit_type"]["enum"] == ["Building", "Electrical", "Mechanical", "Plumbing"]
    assert (search["limit"]["minimum"], search["limit"]["maximum"]) == (1, 100)
    assert search["parcel"]["maxItems"] == 25
    assert "required" not in catalogue["search_permits"]["inputSchema"]
    assert catalogue["list_watches"]["inputSchema"]["properties"] == {}
    destructive = catalogue["unwatch_permit"]["annotations"]
    assert destructive["destructiveHint"] is True
    assert catalogue["watch_permit"]["annotations"]["destructiveHint"] is False


def test_status_output_is_a_record_or_an_operation(catalogue: dict[str, Any]) -> None:
    validator = Draft202012Validator(catalogue["get_permit_status"]["outputSchema"])
    operation = {
        "operation_id": "0b5c5d36-7a52-4c1f-a9c6-2d3f8d1f6a10",
        "operation_type": "permit_refresh",
        "status": "pending",
        "poll_url": "/api/v1/operations/0b5c5d36-7a52-4c1f-a9c6-2d3f8d1f6a10",
        "created_at": "2026-11-22T12:00:00Z",
        "started_at": None,
        "completed_at": None,
        "result": None,
        "error": None,
        "retry_after_seconds": 2,
        "poll_hint": "poll",
    }
    assert validator.is_valid(operation)
    assert not validator.is_valid({**operation, "status": "done"})
    assert not validator.is_valid({**operation, "retry_after_seconds": "2"})
    # Neither a record nor an operation: each variant requires a field of its own.
    assert not validator.is_valid({"status": "Issued", "source": "cached"})


def test_validation_is_structural_and_rest_decides_values() -> None:
    with pytest.raises(ValidationError):
        StatusInput.model_validate({"permit_number": "1", "contractor": "x"})
    with pytest.raises(ValidationError):
        StatusInput.model_validate({"permit_number": 123})
    with pytest.raises(ValidationError):
        StatusInput.model_validate({"permit_number": "1", "force_refresh": "yes"})
    # Values REST validates itself reach it, so the answer carries REST's own code.
    assert StatusInput.model_validate({"permit_number": "", "jurisdiction": "nowhere"})
    assert BatchInput.model_validate({"permit_numbers": []})
    search = SearchInput.model_validate(
        {"parcel": ["1234-567-890", "2345678901"], "lat": 34, "radius_mi": 2.5, "limit": 10}
    )
    assert search.query_params() == [
        ("parcel", "1234-567-890"),
        ("parcel", "2345678901"),
        ("lat", "34"),
        ("radius_mi", "2.5"),
        ("limit", "10"),
    ]
    # Numbers as a query string would carry them: REST refuses the exponent form.
    tiny = SearchInput.model_validate({"value_min": 0.00001, "lat": 1e-5, "value_max": 2e7})
    assert tiny.query_params() == [
        ("lat", "0.00001"),
        ("value_min", "0.00001"),
        ("value_max", "20000000"),
    ]


VALID_ARGUMENTS: dict[str, dict[str, Any]] = {
    "get_permit_status": {
        "permit_number": "21030-20000-00256",
        "jurisdiction": "ladbs",
        "force_refresh": True,
        "respond_async": True,
        "near": "34.05,-118.25",
    },
    "batch_permit_status": {"permit_numbers": ["21030-20000-00256"] * 25},
    "list_jurisdictions": {},
    "search_permits": {
        "jurisdiction": "epicla",
        "parcel": ["1234-567-890"],
        "zip": "90012-1234",
        "lat": 34.0,
        "lon": -118.2,
        "radius_mi": 25,
        "permit_type": "Electrical",
        "date_from": "2026-01-01",
        "limit": 100,
    },
    "resolve_permit": {"permit_number": "BLD24-00123", "jurisdiction": "aca:sandiego"},
    "get_canonical_permit": {"permit_id": "0b5c5d36-7a52-4c1f-a9c6-2d3f8d1f6a10"},
    "get_permit_inspections": {"permit_number": "x" * 64},
    "get_permit_conditions": {"permit_number": "21030-20000-00256"},
    "get_permit_history": {"permit_number": "21030-20000-00256"},
    "watch_permit": {"permit_number": "21030-20000-00256"},
    "unwatch_permit": {"permit_number": "21030-20000-00256"},
    "list_watches": {},
    "get_operation": {"operation_id": "0b5c5d36-7a52-4c1f-a9c6-2d3f8d1f6a10"},
}

# Values the full schemas (the 79-slug enum, the REST bounds) refused, per argument: the
# compact ones still refuse them.
_WRONG_TYPES: list[Any] = [None, 1, 1.5, True, "text", [], {}]
BOUNDS: dict[str, list[Any]] = {
    "permit_number": ["", "x" * 65],
    "jurisdiction": ["", "LA County", "ladbs?", "x" * 65],
    "near": ["x" * 65],
    "permit_numbers": [[], ["21030-20000-00256"] * 26, [""], ["x" * 65]],
    "parcel": [[], ["1234567890"] * 26, ["12345abcde"]],
    "zip": ["9001", "900123"],
    "lat": [90.5, -91],
    "lon": [180.5],
    "radius_mi": [0, 25.5],
    "permit_type": ["Demolition"],
    "date_from": ["01/02/2026"],
    "date_to": ["2026-1-2"],
    "value_min": [-1],
    "limit": [0, 101],
    "status": ["", "x" * 101],
    "cursor": [""],
    "permit_id": ["nope", "0b5c5d36-7a52-4c1f-a9c6"],
    "operation_id": ["42"],
    "city": ["Pasadena"],
    "county": ["Orange County"],
}


def _json_type_fits(value: Any, schema_type: Any) -> bool:
    kinds = schema_type if isinstance(schema_type, list) else [schema_type]
    checks = {
        "string": isinstance(value, str),
        "integer": isinstance(value, int) and not isinstance(value, bool),
        "number": isinstance(value, int | float) and not isinstance(value, bool),
        "boolean": isinstance(value, bool),
        "array": isinstance(value, list),
        "object": isinstance(value, dict),
        "null": value is None,
    }
    return any(checks[kind] for kind in kinds)


@pytest.mark.parametrize("name", TOOL_NAMES)
def test_each_input_schema_still_refuses_what_it_refused(
    catalogue: dict[str, Any], name: str
) -> None:
    schema = catalogue[name]["inputSchema"]
    validator = Draft202012Validator(schema)
    valid = VALID_ARGUMENTS[name]
    assert not list(validator.iter_errors(valid)), name
    refused: list[dict[str, Any]] = [{**valid, "verbose": True}]
    refused += [
        {k: v for k, v in valid.items() if k != required} for required in schema.get("required", [])
    ]
    for argument, prop in schema["properties"].items():
        refused += [
            {**valid, argument: value}
            for value in _WRONG_TYPES
            if not _json_type_fits(value, prop["type"])
        ]
        refused += [{**valid, argument: value} for value in BOUNDS.get(argument, [])]
    for arguments in refused:
        assert not validator.is_valid(arguments), (name, arguments)
    # Every slug list_jurisdictions answers fits the pattern that replaced the enum.
    if "jurisdiction" in schema["properties"] and name != "search_permits":
        for jurisdiction in default_directory():
            assert validator.is_valid({**valid, "jurisdiction": jurisdiction.slug})


@pytest.mark.parametrize("name", TOOL_NAMES)
def test_the_compact_output_schema_still_validates_what_it_types(
    catalogue: dict[str, Any], name: str
) -> None:
    output = catalogue[name]["outputSchema"]
    variants = output.get("anyOf", [output])
    for variant in variants:
        assert variant["type"] == "object"
        assert variant["properties"], name
        for field in variant["properties"].values():
            assert set(field) <= {"type", "enum", "const", "format", "items"}, field
