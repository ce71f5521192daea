"""Ground-truth snapshots to and from JSON, for the control API."""

from __future__ import annotations

import dataclasses
import typing
from datetime import date, datetime
from typing import Any

from permitapi.sources.base import (
    Condition,
    Inspection,
    NormalizedStatus,
    PendingInspection,
    PermitSnapshot,
    StatusEvent,
    WorkflowTask,
)

LIST_ITEMS: dict[str, type[Any]] = {
    "inspections": Inspection,
    "pending_inspections": PendingInspection,
    "conditions": Condition,
    "timeline": StatusEvent,
    "workflow": WorkflowTask,
}
# What the control API may not set directly: identity comes from the URL, and the normalised
# status follows the raw one (through the family's table) unless given as `normalized_status`.
PROTECTED = {"jurisdiction", "permit_number", "status"}


class SnapshotInputError(ValueError):
    pass


def to_json(value: Any) -> Any:
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: to_json(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, list | tuple):
        return [to_json(item) for item in value]
    if isinstance(value, dict):
        return {key: to_json(item) for key, item in value.items()}
    if isinstance(value, date | datetime):
        return value.isoformat()
    return value


def _parse_temporal(name: str, raw: Any, allow_datetime: bool) -> date | datetime | None:
    if raw is None:
        return None
    if not isinstance(raw, str):
        raise SnapshotInputError(f"{name}: expected an ISO date string")
    try:
        if allow_datetime and "T" in raw:
            return datetime.fromisoformat(raw)
        return date.fromisoformat(raw)
    except ValueError as exc:
        raise SnapshotInputError(f"{name}: {exc}") from None


def _coerce(cls: type[Any], payload: dict[str, Any], where: str) -> dict[str, Any]:
    hints = typing.get_type_hints(cls)
    names = {f.name for f in dataclasses.fields(cls)}
    values: dict[str, Any] = {}
    for name, raw in payload.items():
        if name not in names:
            raise SnapshotInputError(f"{where}{name}: unknown field")
        hint = str(hints[name])
        if name in LIST_ITEMS and cls is PermitSnapshot:
            if raw is None:
                values[name] = None
                continue
            if not isinstance(raw, list) or not all(isinstance(i, dict) for i in raw):
                raise SnapshotInputError(f"{name}: expected a list of objects or null")
            item_cls = LIST_ITEMS[name]
            try:
                values[name] = [
                    item_cls(**_coerce(item_cls, item, f"{name}[{index}]."))
                    for index, item in enumerate(raw)
                ]
            except TypeError as exc:
                raise SnapshotInputError(f"{name}: {exc}") from None
        elif "datetime.date" in hint:
            values[name] = _parse_temporal(where + name, raw, "datetime.datetime" in hint)
        elif "float" in hint:
            if raw is not None and (not isinstance(raw, int | float) or isinstance(raw, bool)):
                raise SnapshotInputError(f"{where}{name}: expected a number")
            values[name] = None if raw is None else float(raw)
        elif "bool" in hint:
            if not isinstance(raw, bool):
                raise SnapshotInputError(f"{where}{name}: expected true or false")
            values[name] = raw
        elif name in ("field_sources", "unavailable"):
            if not isinstance(raw, dict):
                raise SnapshotInputError(f"{name}: expected an object")
            values[name] = {str(k): str(v) for k, v in raw.items()}
        else:
            if raw is not None and not isinstance(raw, str):
                raise SnapshotInputError(f"{where}{name}: expected a string")
            values[name] = raw
    return values


def apply_changes(
    snapshot: PermitSnapshot, changes: dict[str, Any], normalize: Any
) -> PermitSnapshot:
    """A copy of `snapshot` with `changes` applied. `status` is the raw portal status; the
    normalised value follows via `normalize(raw) -> NormalizedStatus` unless
    `normalized_status` is given explicitly."""
    changes = dict(changes)
    raw_status = changes.pop("status", None)
    normalized = changes.pop("normalized_status", None)
    for name in PROTECTED & changes.keys():
        raise SnapshotInputError(f"{name}: cannot be changed through the control API")
    if "raw_status" in changes:
        raw_status = changes.pop("raw_status")
    values = _coerce(PermitSnapshot, changes, "")
    if raw_status is not None:
        if not isinstance(raw_status, str) or not raw_status.strip():
            raise SnapshotInputError("status: expected a non-empty string")
        values["raw_status"] = raw_status
        values["status"] = normalize(raw_status)
    if normalized is not None:
        try:
            values["status"] = NormalizedStatus(normalized)
        except ValueError:
            raise SnapshotInputError(f"normalized_status: unknown value {normalized!r}") from None
    return dataclasses.replace(snapshot, **values)
