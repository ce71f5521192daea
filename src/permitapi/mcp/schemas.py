"""The tools' input and output shapes, and the JSON Schemas `tools/list` advertises.

Inputs are pydantic models that refuse unknown arguments and wrong JSON types (`invalid_arguments`
before any service call). Value rules the REST twin already enforces (a permit number's length,
a known jurisdiction slug, 1-25 batch entries, every discovery filter) are advertised in the
schema (`minLength`, `enum`, `maxItems`, ...) but decided by the same service code as REST, so a
bad value gets the REST twin's own problem code (`invalid_permit_number`, `invalid_jurisdiction`,
`invalid_batch_size`, `invalid_zip`, ...).

Outputs are the REST answers: the schemas are the REST response models'.
"""

from __future__ import annotations

import math
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter

from permitapi.account.plans import BATCH_MAX_PERMITS, PARCELS_PER_SEARCH_MAX
from permitapi.discovery.filters import (
    DEFAULT_LIMIT,
    MAX_LIMIT,
    MAX_RADIUS_MI,
    MAX_STATUS_LENGTH,
    PERMIT_TYPES,
)
from permitapi.kit.plain_numbers import plain_decimal
from permitapi.permit.identity.service import MAX_NUMBER_LENGTH
from permitapi.permit.operation.schemas import OperationOut
from permitapi.watch.schemas import WatchEnrolled

# The shape of a directory slug (`ladbs`, `aca:sandiego`): advertised instead of the 79-slug
# enum, which cost more than a third of `tools/list`; list_jurisdictions enumerates them and an
# unknown slug is the service's invalid_jurisdiction with `did_you_mean`.
SLUG_PATTERN = r"^[a-z][a-z0-9_-]*(:[a-z0-9_-]+)?$"
MAX_SLUG_LENGTH = 64
DATE_PATTERN = r"^\d{4}-\d{2}-\d{2}$"
UUID_PATTERN = r"^[0-9a-fA-F]{8}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{12}$"
MAX_ID_LENGTH = 64


def _advertised(**schema: Any) -> Any:
    """Keywords shown in the input schema but decided by the service (REST's codes)."""
    return schema


class ToolInput(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)


class PermitRef(ToolInput):
    permit_number: str = Field(
        description="As the portal shows it.",
        json_schema_extra=_advertised(minLength=1, maxLength=MAX_NUMBER_LENGTH),
    )
    jurisdiction: str | None = Field(
        default=None,
        description="Slug (list_jurisdictions), for number formats shared by several.",
    )


class StatusInput(PermitRef):
    force_refresh: bool = Field(
        default=False,
        description="Read the portal even if cached: paid plans, 10 credits.",
    )
    respond_async: bool = Field(
        default=False,
        description="With force_refresh: answer an operation at once (for get_operation).",
    )
    near: str | None = Field(
        default=None,
        description="'<lat>,<lon>': ranks ambiguous candidates by distance.",
        json_schema_extra=_advertised(maxLength=64),
    )


class BatchInput(ToolInput):
    permit_numbers: list[str] = Field(
        description=f"1 to {BATCH_MAX_PERMITS} permit numbers.",
        json_schema_extra=_advertised(
            minItems=1,
            maxItems=BATCH_MAX_PERMITS,
            items={"type": "string", "minLength": 1, "maxLength": MAX_NUMBER_LENGTH},
        ),
    )


class NoInput(ToolInput):
    pass


class SearchInput(ToolInput):
    city: str | None = Field(
        default=None,
        description="Scope: City of Los Angeles.",
        json_schema_extra=_advertised(enum=["Los Angeles"]),
    )
    county: str | None = Field(
        default=None,
        description="Scope: unincorporated county.",
        json_schema_extra=_advertised(enum=["Los Angeles County"]),
    )
    jurisdiction: str | None = Field(
        default=None,
        description="Scope: one source (default both).",
        json_schema_extra=_advertised(enum=["ladbs", "epicla"]),
    )
    parcel: list[str] | None = Field(
        default=None,
        description="Assessor parcel numbers.",
        json_schema_extra=_advertised(
            minItems=1,
            maxItems=PARCELS_PER_SEARCH_MAX,
            items={"type": "string", "pattern": r"^[0-9 -]+$", "maxLength": 20},
        ),
    )
    zip: str | None = Field(
        default=None,
        description="ZIP code.",
        json_schema_extra=_advertised(pattern=r"^\d{5}(-\d{4})?$"),
    )
    lat: float | None = Field(
        default=None,
        description="With lon, radius_mi.",
        json_schema_extra=_advertised(minimum=-90, maximum=90),
    )
    lon: float | None = Field(
        default=None,
        description="With lat, radius_mi.",
        json_schema_extra=_advertised(minimum=-180, maximum=180),
    )
    radius_mi: float | None = Field(
        default=None,
        description="Radius in miles.",
        json_schema_extra=_advertised(exclusiveMinimum=0, maximum=MAX_RADIUS_MI),
    )
    permit_type: str | None = Field(
        default=None,
        description="Permit type.",
        json_schema_extra=_advertised(enum=list(PERMIT_TYPES)),
    )
    date_from: str | None = Field(
        default=None,
        description="Issued on or after.",
        json_schema_extra=_advertised(format="date", pattern=DATE_PATTERN),
    )
    date_to: str | None = Field(
        default=None,
        description="Issued on or before.",
        json_schema_extra=_advertised(format="date", pattern=DATE_PATTERN),
    )
    value_min: float | None = Field(
        default=None,
        description="Valuation at least (USD).",
        json_schema_extra=_advertised(minimum=0),
    )
    value_max: float | None = Field(
        default=None,
        description="Valuation at most (USD).",
        json_schema_extra=_advertised(minimum=0),
    )
    status: str | None = Field(
        default=None,
        description="Portal status text.",
        json_schema_extra=_advertised(minLength=1, maxLength=MAX_STATUS_LENGTH),
    )
    limit: int | None = Field(
        default=None,
        description=f"Results per page (default {DEFAULT_LIMIT}).",
        json_schema_extra=_advertised(minimum=1, maximum=MAX_LIMIT),
    )
    cursor: str | None = Field(
        default=None,
        description="pagination.next_cursor, same filters.",
        json_schema_extra=_advertised(minLength=1),
    )

    def query_params(self) -> list[tuple[str, str]]:
        """The REST query string's (name, value) pairs, so one parser decides both."""
        params: list[tuple[str, str]] = []
        for name, value in self.model_dump(exclude_none=True).items():
            values = value if isinstance(value, list) else [value]
            params.extend((name, _query_value(v)) for v in values)
        return params


def _query_value(value: Any) -> str:
    # A number as a query string carries it: `0.00001`, never `1e-05` (which REST refuses).
    if isinstance(value, float) and math.isfinite(value):
        return plain_decimal(value)
    return str(value)


class PermitIdInput(ToolInput):
    permit_id: str = Field(
        description="From resolve_permit or a status record.",
        pattern=UUID_PATTERN,
        max_length=MAX_ID_LENGTH,
        json_schema_extra=_advertised(format="uuid"),
    )


class OperationIdInput(ToolInput):
    operation_id: str = Field(
        description="From get_permit_status or batch_permit_status.",
        pattern=UUID_PATTERN,
        max_length=MAX_ID_LENGTH,
        json_schema_extra=_advertised(format="uuid"),
    )


# -- outputs that add to the REST body -------------------------------------------------------


class OperationAccepted(OperationOut):
    """REST's 202: the operation, plus when and how to look again."""

    retry_after_seconds: int = Field(description="Wait at least this long before polling")
    poll_hint: str = Field(description="How to get the result")


class WatchAnswer(WatchEnrolled):
    newly_watched: bool = Field(
        description="true: this call started the watch (REST 201); false: already watched (200)"
    )


# -- JSON Schema shaping -----------------------------------------------------------------------


def _strip_titles(node: Any) -> Any:
    """Drop pydantic's generated `title` keywords (noise for a model reading the schema); a
    property that is itself named `title` stays."""
    if isinstance(node, dict):
        cleaned: dict[str, Any] = {}
        for key, value in node.items():
            if key == "title" and isinstance(value, str):
                continue
            if key in ("properties", "$defs") and isinstance(value, dict):
                cleaned[key] = {name: _strip_titles(sub) for name, sub in value.items()}
            else:
                cleaned[key] = _strip_titles(value)
        return cleaned
    if isinstance(node, list):
        return [_strip_titles(item) for item in node]
    return node


def _collapse_optional(prop: dict[str, Any]) -> dict[str, Any]:
    """An optional argument's `anyOf: [X, null]` (default null) becomes X: omitting the
    argument is how a caller says "none"."""
    variants = prop.get("anyOf")
    if not isinstance(variants, list):
        return prop
    kept = [v for v in variants if v != {"type": "null"}]
    if len(kept) != 1 or len(kept) == len(variants):
        return prop
    collapsed = {k: v for k, v in prop.items() if k != "anyOf"}
    if collapsed.get("default", 0) is None:
        del collapsed["default"]
    return {**kept[0], **collapsed}


def input_schema(model: type[BaseModel], *, slug_pattern: bool = False) -> dict[str, Any]:
    """The advertised input schema: an object with no other properties. `slug_pattern`: a
    `jurisdiction` argument advertises the slug shape (the service decides the value)."""
    schema: dict[str, Any] = _strip_titles(model.model_json_schema())
    properties: dict[str, Any] = schema.setdefault("properties", {})
    required = set(schema.get("required", []))
    for name, prop in list(properties.items()):
        if name not in required:
            properties[name] = _collapse_optional(prop)
            if properties[name].get("default") is False:
                del properties[name]["default"]  # a flag is off unless sent
    if slug_pattern and "jurisdiction" in properties:
        properties["jurisdiction"] = {
            "type": "string",
            "pattern": SLUG_PATTERN,
            "maxLength": MAX_SLUG_LENGTH,
            "description": properties["jurisdiction"].get("description", ""),
        }
    schema["type"] = "object"
    schema["additionalProperties"] = False
    if not schema.get("required"):
        schema.pop("required", None)
    return schema


# Output schemas are compact: each answer's top-level fields with their JSON types, enums and
# formats, nested objects and lists by their type only, and no prose. They still validate every
# answer; a model learns the fields from the tool description and the answer itself, and the
# REST document (GET /openapi.json) types every nested field. The full schemas cost 24 KB of
# the 46 KB `tools/list` (DataFreshness alone was repeated in six of them).
_KEPT = ("type", "enum", "const", "format")


def _resolve(node: dict[str, Any], defs: dict[str, Any]) -> dict[str, Any]:
    ref = node.get("$ref")
    if isinstance(ref, str):
        resolved: dict[str, Any] = defs[ref.rsplit("/", 1)[-1]]
        return resolved
    return node


def _types(node: dict[str, Any], defs: dict[str, Any]) -> list[str]:
    node = _resolve(node, defs)
    if isinstance(node.get("anyOf"), list):
        return [t for variant in node["anyOf"] for t in _types(variant, defs)]
    kind = node.get("type")
    if isinstance(kind, list):
        return [str(t) for t in kind]
    if isinstance(kind, str):
        return [kind]
    return ["object"] if "properties" in node else []


def _field(node: dict[str, Any], defs: dict[str, Any]) -> dict[str, Any]:
    """One field: its type(s), and its enum, const or format when it is a scalar."""
    node = _resolve(node, defs)
    kinds = list(dict.fromkeys(_types(node, defs)))
    if not kinds:
        return {}  # any JSON value
    field: dict[str, Any] = {"type": kinds[0] if len(kinds) == 1 else kinds}
    if "anyOf" not in node:
        field.update({k: v for k, v in node.items() if k in _KEPT and k != "type"})
    if isinstance(node.get("items"), dict) and "type" in node["items"]:
        field["items"] = {k: v for k, v in node["items"].items() if k in _KEPT}
    return field


def _shape(node: dict[str, Any], defs: dict[str, Any]) -> dict[str, Any]:
    node = _resolve(node, defs)
    if isinstance(node.get("anyOf"), list):
        return _union(node["anyOf"], defs)
    properties = node.get("properties", {})
    shaped: dict[str, Any] = {
        "type": "object",
        "properties": {name: _field(prop, defs) for name, prop in properties.items()},
    }
    return shaped


def _union(variants: list[dict[str, Any]], defs: dict[str, Any]) -> dict[str, Any]:
    """Each variant requires its first field no other variant has, so an answer matches the
    variant it is (a status record is not an operation)."""
    shapes = []
    for variant in variants:
        shape = _shape(variant, defs)
        others = {
            name
            for other in variants
            if other is not variant
            for name in _resolve(other, defs).get("properties", {})
        }
        own = [n for n in _resolve(variant, defs).get("required", []) if n not in others]
        if own:
            shape["required"] = own[:1]
        shapes.append(shape)
    return {"anyOf": shapes}


def output_schema(*models: type[BaseModel]) -> dict[str, Any]:
    """The REST answer's compact schema; several models: any one of them (still an object)."""
    union: Any = models[0]
    for model in models[1:]:
        union = union | model
    full: dict[str, Any] = TypeAdapter(union).json_schema(mode="serialization")
    shaped = _shape(full, full.get("$defs", {}))
    return {"type": "object", **shaped}
