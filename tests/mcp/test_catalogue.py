"""The tool catalogue as `tools/list` shows it, built in-process (no server): exactly twelve
tools, strict input schemas, valid output schemas, annotations, and the arguments REST's own
validation decides passed through to it."""

from __future__ import annotations

from typing import Any

import pytest
from jsonschema import Draft202012Validator
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
]
READ_ONLY = set(TOOL_NAMES) - {"watch_permit", "unwatch_permit"}


@pytest.fixture(scope="module")
def catalogue() -> dict[str, dict[str, Any]]:
    server = ToolServer(Settings(environment="test"), default_directory())
    return {
        d.name: d.model_dump(by_alias=True, exclude_none=True, mode="json")
        for d in server.definitions
    }


def test_exactly_the_twelve_tools_in_a_stable_order(catalogue: dict[str, Any]) -> None:
    assert list(catalogue) == TOOL_NAMES


@pytest.mark.parametrize("name", TOOL_NAMES)
def test_each_tool_is_described_for_an_agent(catalogue: dict[str, Any], name: str) -> None:
    tool = catalogue[name]
    assert tool["title"]
    assert tool["annotations"]["title"] == tool["title"]
    description = tool["description"]
    assert len(description) > 120
    assert "credit" in description or "search" in description, description  # what it costs
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
    slugs = status["properties"]["jurisdiction"]["enum"]
    assert {"ladbs", "epicla", "aca:sandiego"} <= set(slugs)
    assert len(slugs) == len(default_directory())
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
    assert not validator.is_valid({"operation_id": "x"})


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
