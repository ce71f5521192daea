"""API shapes of the saved-search endpoints."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Final, Literal

from pydantic import BaseModel, ConfigDict, Field

from permitapi.account.plans import PARCELS_PER_SEARCH_MAX
from permitapi.discovery.filters import MAX_RADIUS_MI, PERMIT_TYPES

# One limit for the schema, the validation and the column. The schema states it; the service
# enforces it (saved_search.service.valid_name), so an overlong name is 400 `invalid_name` like
# every other bad name, not a generic body error.
NAME_MAX: Final = 100
_NAME_LIMIT: Final[dict[str, Any]] = {"maxLength": NAME_MAX}
_STRING = {"type": "string"}
_NUMBER = {"type": "number"}
_DATE = {"type": "string", "format": "date"}
# What the criteria object holds: GET /permits/search's filters (not limit or cursor). The
# values are validated by the search's own rules, so their problems carry its codes.
CRITERIA_SCHEMA: dict[str, Any] = {
    "type": "object",
    "description": "Discovery filters of GET /api/v1/permits/search (at least one; not limit "
    "or cursor), validated exactly as that endpoint validates them, with the same 400 codes "
    "naming `criteria.<filter>`.",
    "properties": {
        "city": {**_STRING, "description": "`Los Angeles` selects ladbs"},
        "county": {**_STRING, "description": "`Los Angeles County` selects epicla"},
        "jurisdiction": {"type": "string", "enum": ["ladbs", "epicla"]},
        "parcel": {
            "anyOf": [_STRING, {"type": "array", "items": _STRING, "minItems": 1,
                                "maxItems": PARCELS_PER_SEARCH_MAX}],
            "description": f"1-{PARCELS_PER_SEARCH_MAX} 10-digit APN/AIN values",
        },
        "zip": _STRING,
        "lat": _NUMBER,
        "lon": _NUMBER,
        "radius_mi": {**_NUMBER, "description": f"> 0 and <= {MAX_RADIUS_MI:g}; with lat, lon"},
        "permit_type": {"type": "string", "enum": list(PERMIT_TYPES)},
        "date_from": _DATE,
        "date_to": _DATE,
        "value_min": _NUMBER,
        "value_max": _NUMBER,
        "status": {**_STRING, "description": "Portal status text"},
    },
    "examples": [{"city": "Los Angeles", "permit_type": "Electrical"}],
}  # fmt: skip
_STORED_CRITERIA: dict[str, Any] = {
    "type": "object",
    "description": "The criteria as they were sent",
}

Status = Literal["active", "paused"]
State = Literal["awaiting_baseline", "monitoring", "paused", "suspended"]


class SavedSearchCreate(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str = Field(
        min_length=1, json_schema_extra=_NAME_LIMIT, examples=["New electrical permits in LA"]
    )
    criteria: dict[str, Any] = Field(json_schema_extra=CRITERIA_SCHEMA)


class SavedSearchUpdate(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str | None = Field(default=None, min_length=1, json_schema_extra=_NAME_LIMIT)
    criteria: dict[str, Any] | None = Field(
        default=None,
        description="Replacement criteria. Criteria selecting other permits clear the seen "
        "identities: the next successful evaluation is a fresh, silent baseline.",
        json_schema_extra={"anyOf": [CRITERIA_SCHEMA, {"type": "null"}]},
    )
    status: Status | None = Field(
        default=None,
        description="paused: not evaluated, the baseline is kept; active: resumes (counts "
        "against the plan's active saved searches again)",
    )


class EvaluationError(BaseModel):
    code: str = Field(
        description="source_unavailable, source_incomplete, source_inconclusive, "
        "source_lagging, internal_error, or the 400 code of criteria no longer accepted"
    )
    message: str


class Evaluation(BaseModel):
    state: State = Field(
        description="awaiting_baseline: the next successful daily evaluation records the "
        "baseline silently; monitoring: new matches emit criteria_match; paused; suspended: "
        "the key has lost the paid plan or the add-on, so the search is not evaluated"
    )
    baseline_taken_at: datetime | None = Field(
        description="When the current criteria's baseline was recorded; null until then"
    )
    baseline_size: int = Field(
        description="Permit identities seen under the current criteria: the baseline (up to "
        "the 100 newest matches) plus every match since"
    )
    last_evaluated_at: datetime | None = Field(description="Last evaluation, successful or not")
    last_success_at: datetime | None
    last_match_at: datetime | None = Field(description="Last evaluation that emitted a match")
    last_error: EvaluationError | None = Field(
        description="Why the last evaluation failed (nothing was emitted; retried on the next "
        "daily run); null after a success"
    )


class SavedSearchOut(BaseModel):
    saved_search_id: str
    name: str
    criteria: dict[str, Any] = Field(json_schema_extra=_STORED_CRITERIA)
    status: Status
    created_at: datetime
    updated_at: datetime
    evaluation: Evaluation


class SavedSearchList(BaseModel):
    saved_searches: list[SavedSearchOut] = Field(description="Oldest first, paused ones too")
    total: int
    active: int = Field(description="Searches counting against the plan's cap (not paused)")
    plan_limit: int = Field(description="Active saved searches the plan allows per key")
    remaining: int = Field(description="Searches that can still be created or resumed")


class SavedSearchDeleted(BaseModel):
    status: Literal["deleted"]
    saved_search_id: str
