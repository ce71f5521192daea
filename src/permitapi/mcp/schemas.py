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
from permitapi.operation.schemas import OperationOut
from permitapi.permit.identity import MAX_NUMBER_LENGTH
from permitapi.watch.schemas import WatchEnrolled

UUID_PATTERN = r"^[0-9a-fA-F]{8}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{12}$"
MAX_ID_LENGTH = 64


def _advertised(**schema: Any) -> Any:
    """Keywords shown in the input schema but decided by the service (REST's codes)."""
    return schema


class ToolInput(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)


class PermitRef(ToolInput):
    permit_number: str = Field(
        description="The permit number as the portal shows it (formatting such as spaces and "
        "dashes may vary).",
        json_schema_extra=_advertised(minLength=1, maxLength=MAX_NUMBER_LENGTH),
    )
    jurisdiction: str | None = Field(
        default=None,
        description="Jurisdiction slug (list_jurisdictions). Omit it for number formats "
        "distinctive to one jurisdiction; needed for shared formats (an ambiguous number "
        "answers multiple_jurisdictions with ranked candidates to choose from).",
    )


class StatusInput(PermitRef):
    force_refresh: bool = Field(
        default=False,
        description="Fetch the portal now even if the cached copy is fresh. Paid plans only; "
        "costs 10 lookup credits; at most 10 an hour.",
    )
    respond_async: bool = Field(
        default=False,
        description="With force_refresh: return an operation at once instead of waiting for the "
        "portal (the REST twin's `Prefer: respond-async`). Ignored without force_refresh.",
    )
    near: str | None = Field(
        default=None,
        description="`<lat>,<lon>`: orders ambiguous candidates by distance; a malformed value "
        "is ignored.",
        json_schema_extra=_advertised(maxLength=64),
    )


class BatchInput(ToolInput):
    permit_numbers: list[str] = Field(
        description=f"1 to {BATCH_MAX_PERMITS} permit numbers; jurisdictions are detected "
        "(shared formats need a prior get_permit_status with the jurisdiction).",
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
        description="Scope: the city of Los Angeles (source ladbs).",
        json_schema_extra=_advertised(enum=["Los Angeles"]),
    )
    county: str | None = Field(
        default=None,
        description="Scope: unincorporated Los Angeles County (source epicla).",
        json_schema_extra=_advertised(enum=["Los Angeles County"]),
    )
    jurisdiction: str | None = Field(
        default=None,
        description="Scope: one source; omitted, both are searched and merged newest first.",
        json_schema_extra=_advertised(enum=["ladbs", "epicla"]),
    )
    parcel: list[str] | None = Field(
        default=None,
        description=f"1-{PARCELS_PER_SEARCH_MAX} distinct 10-digit assessor parcel numbers "
        "(APN/AIN); spaces and hyphens are ignored; exact match.",
        json_schema_extra=_advertised(
            minItems=1,
            maxItems=PARCELS_PER_SEARCH_MAX,
            items={"type": "string", "pattern": r"^[0-9 -]+$", "maxLength": 20},
        ),
    )
    zip: str | None = Field(
        default=None,
        description="5-digit ZIP code (ZIP+4 accepted).",
        json_schema_extra=_advertised(pattern=r"^\d{5}(-\d{4})?$"),
    )
    lat: float | None = Field(
        default=None,
        description="Latitude of the circle's centre; with lon and radius_mi.",
        json_schema_extra=_advertised(minimum=-90, maximum=90),
    )
    lon: float | None = Field(
        default=None,
        description="Longitude of the circle's centre; with lat and radius_mi.",
        json_schema_extra=_advertised(minimum=-180, maximum=180),
    )
    radius_mi: float | None = Field(
        default=None,
        description=f"Radius in miles, more than 0 and at most {MAX_RADIUS_MI:g}.",
        json_schema_extra=_advertised(exclusiveMinimum=0, maximum=MAX_RADIUS_MI),
    )
    permit_type: str | None = Field(
        default=None,
        description="Permit type.",
        json_schema_extra=_advertised(enum=list(PERMIT_TYPES)),
    )
    date_from: str | None = Field(
        default=None,
        description="Issued on or after (YYYY-MM-DD).",
        json_schema_extra=_advertised(format="date", pattern=r"^\d{4}-\d{2}-\d{2}$"),
    )
    date_to: str | None = Field(
        default=None,
        description="Issued on or before (YYYY-MM-DD).",
        json_schema_extra=_advertised(format="date", pattern=r"^\d{4}-\d{2}-\d{2}$"),
    )
    value_min: float | None = Field(
        default=None,
        description="Declared valuation at least (dollars).",
        json_schema_extra=_advertised(minimum=0),
    )
    value_max: float | None = Field(
        default=None,
        description="Declared valuation at most (dollars).",
        json_schema_extra=_advertised(minimum=0),
    )
    status: str | None = Field(
        default=None,
        description="Portal status text, e.g. Issued.",
        json_schema_extra=_advertised(minLength=1, maxLength=MAX_STATUS_LENGTH),
    )
    limit: int | None = Field(
        default=None,
        description=f"Results per page (default {DEFAULT_LIMIT}).",
        json_schema_extra=_advertised(minimum=1, maximum=MAX_LIMIT, default=DEFAULT_LIMIT),
    )
    cursor: str | None = Field(
        default=None,
        description="pagination.next_cursor of the previous page, with the same filters "
        "(valid 15 minutes, for the same API key). Each page is one search.",
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
        description="The canonical permit UUID (resolve_permit or a status record's permit_id).",
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


def input_schema(
    model: type[BaseModel], *, jurisdictions: list[str] | None = None
) -> dict[str, Any]:
    """The advertised input schema: an object with no other properties. `jurisdictions` (the
    directory's slugs) becomes the enum of a `jurisdiction` argument."""
    schema: dict[str, Any] = _strip_titles(model.model_json_schema())
    properties: dict[str, Any] = schema.setdefault("properties", {})
    required = set(schema.get("required", []))
    for name, prop in list(properties.items()):
        if name not in required:
            properties[name] = _collapse_optional(prop)
    if jurisdictions is not None and "jurisdiction" in properties:
        properties["jurisdiction"] = {
            "type": "string",
            "enum": list(jurisdictions),
            "description": properties["jurisdiction"].get("description", ""),
        }
    schema["type"] = "object"
    schema["additionalProperties"] = False
    if not schema.get("required"):
        schema.pop("required", None)
    return schema


def output_schema(*models: type[BaseModel]) -> dict[str, Any]:
    """The REST answer's schema; several models: any one of them (still an object)."""
    if len(models) == 1:
        schema: dict[str, Any] = _strip_titles(models[0].model_json_schema(mode="serialization"))
        return schema
    union: Any = models[0]
    for model in models[1:]:
        union = union | model
    combined: dict[str, Any] = _strip_titles(TypeAdapter(union).json_schema(mode="serialization"))
    return {"type": "object", **combined}
