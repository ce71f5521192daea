"""The OpenAPI document types every payload (issue 23): a walk over the whole served document
fails on a timestamp-named property without `format: date-time` (or a date-or-date-time
union, for portal moments), a 2xx JSON response without an example, a 2xx answered with
FastAPI's "Successful Response", a parameter without a description, or an operation's 202
without its Location; and the document names its servers."""

from __future__ import annotations

import re
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

import pytest
from openapi_schema_validator import OAS31Validator

from permitapi.app import create_app
from permitapi.event.data_schemas import EVENT_DATA
from permitapi.event.examples import example_data
from permitapi.event.service import EVENT_TYPES
from permitapi.web.openapi_completion import sample
from tests.web.openapi.test_document import doc, operations, resolve

__all__ = ["doc"]

TIMESTAMP = re.compile(r"(_at|^at)$")


def _walk(node: Any, where: str) -> Iterator[tuple[str, dict[str, Any]]]:
    """Every (location, property schema) of every `properties` map, however deep."""
    if isinstance(node, dict):
        properties = node.get("properties")
        if isinstance(properties, dict):
            for name, prop in properties.items():
                if isinstance(prop, dict):
                    yield f"{where}/properties/{name}", prop
        for key, value in node.items():
            yield from _walk(value, f"{where}/{key}")
    elif isinstance(node, list):
        for index, value in enumerate(node):
            yield from _walk(value, f"{where}[{index}]")


def _formats(doc: dict[str, Any], prop: dict[str, Any]) -> set[str | None]:
    prop = resolve(doc, prop)
    variants = [resolve(doc, v) for v in prop.get("anyOf", prop.get("oneOf", [prop]))]
    return {v.get("format") for v in variants if v.get("type") != "null"}


def test_every_timestamp_is_typed(doc: dict[str, Any]) -> None:
    untyped = []
    walked = 0
    for where, prop in _walk(doc, "#"):
        name = where.rsplit("/", 1)[1]
        if not TIMESTAMP.search(name):
            continue
        walked += 1
        formats = _formats(doc, prop)
        if formats != {"date-time"} and formats != {"date-time", "date"}:
            untyped.append((where, formats))
    assert walked > 30
    assert not untyped, untyped


def test_the_walk_would_catch_an_untyped_timestamp(doc: dict[str, Any]) -> None:
    broken = {"properties": {"expires_at": {"type": "string"}}}
    found = [w for w, p in _walk(broken, "#") if _formats(doc, p) != {"date-time"}]
    assert found == ["#/properties/expires_at"]


def test_every_2xx_has_a_description_and_an_example(doc: dict[str, Any]) -> None:
    for method, path, operation in operations(doc):
        for status, response in operation["responses"].items():
            if not status.startswith("2"):
                continue
            assert response["description"] not in ("", "Successful Response"), (method, path)
            for media in response.get("content", {}).values():
                assert "example" in media or media.get("examples"), (method, path, status)


def test_every_parameter_is_described(doc: dict[str, Any]) -> None:
    for method, path, operation in operations(doc):
        for parameter in operation.get("parameters", []):
            assert parameter.get("description"), (method, path, parameter["name"])


def test_every_201_and_202_names_its_location(doc: dict[str, Any]) -> None:
    checked = 0
    for method, path, operation in operations(doc):
        for status, response in operation["responses"].items():
            if status in ("201", "202"):
                assert "Location" in response.get("headers", {}), (method, path, status)
                checked += 1
    assert checked >= 5


def test_servers_name_this_deployment_and_the_dev_server(doc: dict[str, Any]) -> None:
    assert [s["url"] for s in doc["servers"]] == ["/", "http://127.0.0.1:8000"]


@pytest.mark.parametrize(
    ("schema", "expected"),
    [
        ({"type": "string", "format": "date-time"}, "2026-05-04T15:00:00Z"),
        ({"type": "integer", "exclusiveMinimum": 0}, 1),
        ({"anyOf": [{"type": "null"}, {"type": "boolean"}]}, True),
        ({"type": "array", "items": {"enum": ["a", "b"]}, "minItems": 2}, ["a", "a"]),
    ],
)
def test_generated_examples_follow_the_schema(schema: dict[str, Any], expected: Any) -> None:
    assert sample(schema, {}) == expected


def test_generated_examples_are_stable() -> None:
    first = create_app().openapi()
    second = create_app().openapi()
    assert first == second


def test_webhooks_has_one_typed_operation_per_event(doc: dict[str, Any]) -> None:
    assert set(doc["webhooks"]) == {*EVENT_TYPES, "test"}
    for event, item in doc["webhooks"].items():
        operation = item["post"]
        media = operation["requestBody"]["content"]["application/json"]
        envelope = resolve(doc, media["schema"])
        assert envelope["properties"]["event"]["const"] == event
        assert {p["name"] for p in operation["parameters"]} >= {
            "webhook-id",
            "webhook-timestamp",
            "webhook-signature",
        }
        schema = {**media["schema"], "components": doc["components"]}
        validator = OAS31Validator(schema)
        assert not [e.message for e in validator.iter_errors(media["example"])], event
        # Typed: a data object of another event's shape is refused.
        if event in EVENT_DATA:
            wrong = {**media["example"], "data": {"new_status": 3}}
            assert not validator.is_valid(wrong), event


def test_feed_events_are_discriminated_by_their_name(doc: dict[str, Any]) -> None:
    feed_event = doc["components"]["schemas"]["FeedEvent"]
    mapping = feed_event["discriminator"]["mapping"]
    assert feed_event["discriminator"]["propertyName"] == "event"
    assert set(mapping) == set(EVENT_TYPES)
    schema = {"$ref": "#/components/schemas/FeedEvent", "components": doc["components"]}
    validator = OAS31Validator(schema)
    for event in EVENT_TYPES:
        entry = {
            "event_id": "e1",
            "event": event,
            "permit_number": "21010-10000-01234",
            "jurisdiction": "ladbs",
            "jurisdiction_display": "City of Los Angeles",
            "data": example_data(event, datetime(2026, 5, 4, tzinfo=UTC)),
            "occurred_at": "2026-05-04T15:00:00Z",
            "created_at": "2026-05-04T15:00:01Z",
        }
        assert not [e.message for e in validator.iter_errors(entry)], event
        assert not validator.is_valid({**entry, "data": {"inspection": 1}}), event


@pytest.mark.parametrize("event", EVENT_TYPES)
def test_every_producer_example_fits_its_data_model(event: str) -> None:
    EVENT_DATA[event].model_validate(example_data(event, datetime(2026, 5, 4, tzinfo=UTC)))
