"""PermitSnapshot <-> JSON-safe dict, for the `permits.snapshot` column and operation results.

Dates travel as ISO strings; a history entry's `changed_at` keeps its precision (date-only
values stay date-only). Decoding tolerates missing keys so older stored snapshots still load.
"""

from __future__ import annotations

from dataclasses import asdict, fields
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

_DATE_FIELDS = ("status_date", "applied_date", "issued_date", "finaled_date", "expires_date")


def _encode(value: Any) -> Any:
    if isinstance(value, datetime):
        return value.isoformat()
    if isinstance(value, date):
        return value.isoformat()
    if isinstance(value, dict):
        return {k: _encode(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_encode(v) for v in value]
    return value


def encode_snapshot(snapshot: PermitSnapshot) -> dict[str, Any]:
    encoded: dict[str, Any] = _encode(asdict(snapshot))
    encoded["status"] = snapshot.status.value
    return encoded


def _date(value: Any) -> date | None:
    return date.fromisoformat(value) if value else None


def _moment(value: Any) -> date | datetime | None:
    if not value:
        return None
    return datetime.fromisoformat(value) if "T" in value else date.fromisoformat(value)


def _items(raw: Any, build: Any) -> Any:
    return None if raw is None else [build(item) for item in raw]


def decode_snapshot(data: dict[str, Any]) -> PermitSnapshot:
    known = {f.name for f in fields(PermitSnapshot)}
    values = {k: v for k, v in data.items() if k in known}
    for name in _DATE_FIELDS:
        values[name] = _date(values.get(name))
    values["status"] = NormalizedStatus(values.get("status", NormalizedStatus.UNKNOWN.value))
    values["inspections"] = _items(
        values.get("inspections"), lambda i: Inspection(**{**i, "date": _date(i.get("date"))})
    )
    values["pending_inspections"] = _items(
        values.get("pending_inspections"),
        lambda i: PendingInspection(**{**i, "date": _date(i.get("date"))}),
    )
    values["conditions"] = _items(
        values.get("conditions"),
        lambda c: Condition(**{**c, "status_date": _date(c.get("status_date"))}),
    )
    values["timeline"] = _items(
        values.get("timeline"),
        lambda e: StatusEvent(**{**e, "changed_at": _moment(e.get("changed_at"))}),
    )
    values["workflow"] = _items(
        values.get("workflow"),
        lambda t: WorkflowTask(**{**t, "completed_at": _date(t.get("completed_at"))}),
    )
    values["field_sources"] = dict(values.get("field_sources") or {})
    return PermitSnapshot(**values)
