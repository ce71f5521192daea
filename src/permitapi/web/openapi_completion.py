"""What the OpenAPI document needs beyond FastAPI's output for a client developer (issue 23):

- `servers`: the deployment the document is served from (relative `/`) and `permitapi dev`;
- `Location` on every 201 and 202 (each endpoint sends it);
- a real description on every 2xx response (FastAPI writes "Successful Response"): the
  operation's summary;
- the sections built from domain schemas that app.py hands over: the `webhooks` section and
  the typed events feed (`event/openapi_webhooks.py`);
- a description on every parameter (FastAPI leaves them empty unless the route says one):
  the shared parameters' meaning, by name;
- an example on every 2xx JSON response that has none of its own: a value built from the
  response schema (realistic values by field name and format), so it always validates;
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Final

DEV_SERVER: Final = "http://127.0.0.1:8000"
SERVERS: Final = [
    {"url": "/", "description": "The deployment serving this document"},
    {"url": DEV_SERVER, "description": "`permitapi dev` on this machine"},
]
_SUCCESSFUL = "Successful Response"

# The parameters several operations share, by name.
PARAMETERS: Final = {
    "permit_number": "The permit number as the portal shows it (spaces and dashes may vary)",
    "permit_id": "The canonical permit id (a UUID): POST /permit-resolutions or a status "
    "record's permit_id",
    "jurisdiction": "Jurisdiction slug (GET /jurisdictions); needed only for number formats "
    "several jurisdictions share",
    "slug": "Jurisdiction slug (GET /jurisdictions)",
    "webhook_id": "The webhook's id (POST /webhooks, GET /webhooks)",
    "delivery_id": "The delivery's id (GET /webhooks/{webhook_id}/deliveries)",
    "saved_search_id": "The saved search's id (POST /saved-searches, GET /saved-searches)",
    "operation_id": "The operation's id (a 202's operation_id or Location)",
    "cursor": "The next_cursor of the previous page (same filters)",
    "limit": "How many items per page",
    "force_refresh": "Read the portal even if the cached copy is fresh (paid plans, 10 credits)",
    "near": "`<lat>,<lon>`: orders ambiguous candidates by distance",
    "Prefer": "`respond-async` with force_refresh: answer 202 with an operation at once",
    "Idempotency-Key": "Makes a retried POST safe: the same key and body answer the first "
    "response again (24 hours)",
}

_MOMENT: Final = "2026-05-04T15:00:00Z"
_UUID: Final = "0b6f8a52-3c1e-5d7a-9e24-6f1d2c3b4a59"
_BY_NAME: Final[dict[str, Any]] = {
    "permit_number": "21010-10000-01234",
    "jurisdiction": "ladbs",
    "slug": "ladbs",
    "jurisdiction_display": "City of Los Angeles",
    "display_name": "City of Los Angeles",
    "url": "https://hooks.example.com/permits",
    "state": "CA",
    "platform": "ladbs",
    "address": "1234 W Sunset Blvd, Los Angeles, CA 90026",
    "name": "Sunset corridor",
    "status": "Issued",
    "permit_type": "Building",
    "version": "1.0.0",
    "zip": "90026",
}


def _resolve(node: dict[str, Any], components: dict[str, Any]) -> dict[str, Any]:
    ref = node.get("$ref")
    if isinstance(ref, str) and ref.startswith("#/components/schemas/"):
        resolved: dict[str, Any] = components[ref.rsplit("/", 1)[-1]]
        return resolved
    return node


def sample(node: dict[str, Any], components: dict[str, Any], name: str = "", depth: int = 0) -> Any:
    """A value of the schema `node` (resolving `$ref`s against components/schemas)."""
    node = _resolve(node, components)
    if "example" in node:
        return node["example"]
    if node.get("examples"):
        return node["examples"][0]
    if "const" in node:
        return node["const"]
    if node.get("enum"):
        return node["enum"][0]
    for union in ("oneOf", "anyOf"):
        if isinstance(node.get(union), list):
            variants = [v for v in node[union] if v.get("type") != "null"] or node[union]
            return sample(variants[0], components, name, depth)
    kind = node.get("type")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), "null")
    if kind == "object" or "properties" in node:
        if depth > 6:
            return {}
        return {
            prop: sample(sub, components, prop, depth + 1)
            for prop, sub in node.get("properties", {}).items()
        }
    if kind == "array":
        items = node.get("items")
        if not isinstance(items, dict) or depth > 6:
            return []
        return [sample(items, components, name, depth + 1)] * max(1, int(node.get("minItems", 1)))
    if kind == "integer":
        if "exclusiveMinimum" in node:
            return int(node["exclusiveMinimum"]) + 1
        return int(node.get("minimum", 1))
    if kind == "number":
        return float(node.get("minimum", 1.0))
    if kind == "boolean":
        return True
    if kind == "null":
        return None
    if kind == "string":
        return _string(node, name)
    return None


def _string(node: dict[str, Any], name: str) -> str:
    fmt = node.get("format")
    if fmt == "date-time" or name.endswith("_at"):
        return _MOMENT
    if fmt == "date" or name.endswith("_on") or name.startswith("date"):
        return _MOMENT[:10]
    if fmt == "uuid" or name.endswith("_id") or name == "id":
        return _UUID
    if fmt == "uri" or name.endswith("_url") or name == "href":
        return "https://api.example.com/api/v1/permits/21010-10000-01234/status"
    if name in _BY_NAME and isinstance(_BY_NAME[name], str):
        value: str = _BY_NAME[name]
        return value
    return name.replace("_", " ") or "text"


def complete(
    schema: dict[str, Any], additions: Sequence[Callable[[dict[str, Any]], None]] = ()
) -> None:
    schema["servers"] = [dict(server) for server in SERVERS]
    for add in additions:
        add(schema)
    components = schema.get("components", {}).get("schemas", {})
    for item in schema.get("paths", {}).values():
        for method, operation in item.items():
            if method not in ("get", "put", "post", "delete", "patch"):
                continue
            for parameter in operation.get("parameters", []):
                if not parameter.get("description"):
                    described = PARAMETERS.get(parameter["name"])
                    schema_description = parameter.get("schema", {}).get("description")
                    parameter["description"] = (
                        described or schema_description or parameter["name"].replace("_", " ")
                    )
            for status, response in operation.get("responses", {}).items():
                if not status.startswith("2"):
                    continue
                headers = response.setdefault("headers", {})
                if status in ("201", "202") and "Location" not in headers:
                    headers["Location"] = {
                        "description": "The created resource (201), or where the accepted "
                        "work is followed (202)",
                        "required": True,
                        "schema": {"type": "string"},
                    }
                if response.get("description") in (None, "", _SUCCESSFUL):
                    response["description"] = operation.get("summary") or "The answer"
                for media in response.get("content", {}).values():
                    if "example" in media or "examples" in media or "schema" not in media:
                        continue
                    media["example"] = sample(media["schema"], components)
