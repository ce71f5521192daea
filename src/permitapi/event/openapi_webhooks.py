"""The OpenAPI 3.1 `webhooks` section and the typed events feed (issue 23).

`webhooks` has one operation per event type: the POST this service sends to a registered URL,
its body the envelope (`WebhookEnvelope_<event>`: event_id, delivery_id, the event name as a
constant, the permit, `data` typed by `event/data_schemas.py`, timestamp) with the Standard
Webhooks headers, and an example built by `event/examples.py`, as `simulate` sends it. The
connectivity probe (`test`) has its own. `FeedEvent` (GET /events) becomes a `oneOf` of one
variant per event, discriminated by `event`, each with the same typed `data`: the runtime model
stays one class, so a new event name never breaks the feed.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any, Final

from pydantic import BaseModel
from pydantic.json_schema import models_json_schema

from permitapi.event.data_schemas import EVENT_DATA
from permitapi.event.examples import EXAMPLE_JURISDICTION, EXAMPLE_PERMIT_NUMBER, example_data
from permitapi.event.service import PERMIT_EVENT_TYPES

REF: Final = "#/components/schemas/{model}"
EXAMPLE_MOMENT: Final = datetime(2026, 5, 4, 15, 0, tzinfo=UTC)
TEST_EVENT: Final = "test"
_HEADERS: Final = {
    "webhook-id": "The delivery_id (Standard Webhooks message id; a replay has a new one)",
    "webhook-timestamp": "Unix seconds when this attempt was signed",
    "webhook-signature": "`v1,<base64 HMAC-SHA256 of '<webhook-id>.<webhook-timestamp>.<body>'>`"
    " per secret in force, space-separated (Standard Webhooks)",
    "x-service-signature": "Legacy: hex HMAC-SHA256 of the raw body keyed with the secret",
    "x-service-event": "The event name",
}


def _data_schemas(components: dict[str, Any]) -> dict[str, str]:
    """Adds each event's data model to components; the $ref per event name."""
    models: list[type[BaseModel]] = list(dict.fromkeys(EVENT_DATA.values()))
    refs, defs = models_json_schema([(m, "serialization") for m in models], ref_template=REF)
    for name, schema in defs.get("$defs", {}).items():
        components.setdefault(name, schema)
    by_model = {m: refs[(m, "serialization")]["$ref"] for m in models}
    return {event: by_model[model] for event, model in EVENT_DATA.items()}


def _envelope(event: str, data_ref: dict[str, Any]) -> dict[str, Any]:
    permit = event in PERMIT_EVENT_TYPES
    nullable_string = {"type": ["string", "null"]}
    return {
        "title": f"WebhookEnvelope_{event}",
        "type": "object",
        "description": f"The body of a `{event}` delivery",
        "required": [
            "event_id",
            "delivery_id",
            "event",
            "permit_number",
            "jurisdiction",
            "jurisdiction_display",
            "data",
            "timestamp",
        ],
        "properties": {
            "event_id": {"type": "string", "description": "The source event (feed's event_id)"},
            "delivery_id": {"type": "string", "description": "This delivery (webhook-id)"},
            "event": {"type": "string", "const": event},
            "permit_number": {"type": "string"} if permit else nullable_string,
            "jurisdiction": {"type": "string"} if permit else nullable_string,
            "jurisdiction_display": nullable_string,
            "data": data_ref,
            "timestamp": {"type": "string", "format": "date-time"},
        },
    }


def _example(event: str, data: dict[str, Any] | None = None) -> dict[str, Any]:
    permit = event in PERMIT_EVENT_TYPES
    return {
        "event_id": "5c9e1f0a-7b2d-4e3f-9a1b-2c3d4e5f6a7b",
        "delivery_id": "8f7e6d5c-4b3a-4c2d-9e1f-0a1b2c3d4e5f",
        "event": event,
        "permit_number": EXAMPLE_PERMIT_NUMBER if permit else None,
        "jurisdiction": EXAMPLE_JURISDICTION if permit else None,
        "jurisdiction_display": "City of Los Angeles" if permit else None,
        "data": example_data(event, EXAMPLE_MOMENT) if data is None else data,
        "timestamp": "2026-05-04T15:00:00Z",
    }


def _operation(event: str, envelope_ref: str, example: dict[str, Any]) -> dict[str, Any]:
    return {
        "post": {
            "operationId": f"webhook_{event}",
            "summary": f"A `{event}` event delivered to a registered webhook URL",
            "description": "Verify webhook-signature before trusting the body; answer any 2xx "
            "within 10 seconds to acknowledge (anything else is retried with backoff).",
            "tags": ["webhooks"],
            "parameters": [
                {
                    "name": name,
                    "in": "header",
                    "required": True,
                    "description": description,
                    "schema": {"type": "string"},
                }
                for name, description in _HEADERS.items()
            ],
            "requestBody": {
                "required": True,
                "content": {
                    "application/json": {"schema": {"$ref": envelope_ref}, "example": example}
                },
            },
            "responses": {"2XX": {"description": "Acknowledged"}},
        }
    }


def add_webhooks(schema: dict[str, Any]) -> None:
    components: dict[str, Any] = schema.setdefault("components", {}).setdefault("schemas", {})
    data_refs = _data_schemas(components)
    data_refs[TEST_EVENT] = ""
    webhooks: dict[str, Any] = {}
    variants: dict[str, str] = {}
    for event, data_ref in data_refs.items():
        data = (
            {"$ref": data_ref}
            if data_ref
            else {
                "type": "object",
                "properties": {"message": {"type": "string"}, "webhook_id": {"type": "string"}},
            }
        )
        envelope_name = f"WebhookEnvelope_{event}"
        components[envelope_name] = _envelope(event, data)
        example = (
            _example(event)
            if data_ref
            else _example(event, {"message": "Test delivery from permitapi", "webhook_id": "wh_1"})
        )
        webhooks[event] = _operation(event, REF.format(model=envelope_name), example)
        if data_ref and "FeedEvent" in components:
            variants[event] = _feed_variant(components, event, data)
    schema["webhooks"] = webhooks
    if "FeedEvent" in components:
        components["FeedEvent"] = {
            "title": "FeedEvent",
            "description": components["FeedEvent"].get("description", "An event of the feed"),
            "oneOf": [{"$ref": ref} for ref in variants.values()],
            "discriminator": {"propertyName": "event", "mapping": variants},
        }


def _feed_variant(components: dict[str, Any], event: str, data: dict[str, Any]) -> str:
    base = components["FeedEvent"]
    name = f"FeedEvent_{event}"
    properties = dict(base.get("properties", {}))
    properties["event"] = {"type": "string", "const": event}
    properties["data"] = data
    # Each variant a model of its own name (generators name models by title).
    components[name] = {**base, "title": name, "properties": properties}
    return REF.format(model=name)
