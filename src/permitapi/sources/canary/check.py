"""Run the canary: `load_records()` reads records.toml; `run_canary` reads every record (one
family or all) through a `SourceGateway` and judges each snapshot against its expected fields.

Per record:
    unreached  the portal could not be read (timeout, outage, throttling, an open circuit): no
               verdict on its pages
    drift      reached, and an expected field is missing or changed shape, or the record could
               not be read as a record at all (a page the parsers no longer understand, a login
               wall or CAPTCHA where there was none, "not found" for a known record)
    ok         every expected field present in its expected shape
Exit status of the command: 1 on any drift, 2 when no record was reached, else 0.
"""

from __future__ import annotations

import asyncio
import dataclasses
import time
import tomllib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path
from typing import Any

from permitapi.sources.base import (
    Blocked,
    Inspection,
    NormalizedStatus,
    NotFoundAtSource,
    PermitSnapshot,
    PortalChanged,
    RetryLater,
    SourceError,
)
from permitapi.sources.gateway import SourceGateway
from permitapi.sources.registry import Directory

RECORDS_FILE = Path(__file__).with_name("records.toml")
SNAPSHOT_FIELDS = frozenset(f.name for f in dataclasses.fields(PermitSnapshot))
DATE_FIELDS = frozenset(
    {"status_date", "applied_date", "issued_date", "finaled_date", "expires_date"}
)
LIST_FIELDS = frozenset(
    {"inspections", "pending_inspections", "conditions", "timeline", "workflow"}
)
TEXT_FIELDS = frozenset({"raw_status", "permit_type", "address", "work_description", "parcel"})


class CanaryConfigError(ValueError):
    pass


@dataclass(frozen=True, slots=True)
class CanaryRecord:
    family: str
    jurisdiction: str
    permit_number: str
    expect: tuple[str, ...]


@dataclass(slots=True)
class RecordReport:
    family: str
    jurisdiction: str
    permit_number: str
    reached: bool
    present: list[str] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)
    changed: list[str] = field(default_factory=list)  # "field: how"
    error: str | None = None
    needs_browser: bool = False
    latency_ms: float | None = None

    @property
    def outcome(self) -> str:
        if not self.reached:
            return "unreached"
        return "drift" if self.missing or self.changed or self.error else "ok"

    def line(self) -> str:
        head = f"{self.outcome:<9} {self.jurisdiction} {self.permit_number}"
        parts = []
        if self.missing:
            parts.append("missing: " + ", ".join(self.missing))
        if self.changed:
            parts.append("changed: " + "; ".join(self.changed))
        if self.error:
            parts.append(self.error)
        if self.outcome == "ok":
            parts.append("present: " + ", ".join(self.present))
        if self.needs_browser:
            parts.append("read in the browser")
        return head + ("  " + " | ".join(parts) if parts else "")

    def as_json(self) -> dict[str, Any]:
        return {"outcome": self.outcome, **dataclasses.asdict(self)}


@dataclass(slots=True)
class CanaryReport:
    records: list[RecordReport]

    @property
    def drift(self) -> bool:
        return any(r.outcome == "drift" for r in self.records)

    @property
    def reached_any(self) -> bool:
        return any(r.reached for r in self.records)

    @property
    def exit_code(self) -> int:
        if self.drift:
            return 1
        return 0 if self.reached_any else 2

    def as_json(self) -> dict[str, Any]:
        return {
            "drift": self.drift,
            "reached": sum(r.reached for r in self.records),
            "exit_code": self.exit_code,
            "records": [r.as_json() for r in self.records],
        }


def load_records(path: Path = RECORDS_FILE) -> list[CanaryRecord]:
    with path.open("rb") as handle:
        data = tomllib.load(handle)
    records = []
    for entry in data.get("record", []):
        expect = tuple(entry.get("expect", ()))
        unknown = set(expect) - SNAPSHOT_FIELDS
        if unknown:
            raise CanaryConfigError(f"{entry.get('permit_number')}: unknown fields {unknown}")
        records.append(
            CanaryRecord(entry["family"], entry["jurisdiction"], entry["permit_number"], expect)
        )
    return records


def families(records: Iterable[CanaryRecord]) -> list[str]:
    return sorted({r.family for r in records})


async def run_canary(
    gateway: SourceGateway,
    directory: Directory,
    records: Sequence[CanaryRecord],
    *,
    family: str | None = None,
) -> CanaryReport:
    """Every record (of `family`, when given), one at a time per family, families at once;
    reported in file order."""
    chosen = [r for r in records if family is None or r.family == family]
    by_family: dict[str, list[CanaryRecord]] = {}
    for record in chosen:
        by_family.setdefault(record.family, []).append(record)

    async def one_family(items: list[CanaryRecord]) -> list[RecordReport]:
        return [await check_record(gateway, directory, item) for item in items]

    done = await asyncio.gather(*(one_family(items) for items in by_family.values()))
    flat = {(r.jurisdiction, r.permit_number): r for group in done for r in group}
    return CanaryReport([flat[(r.jurisdiction, r.permit_number)] for r in chosen])


async def check_record(
    gateway: SourceGateway, directory: Directory, record: CanaryRecord
) -> RecordReport:
    report = RecordReport(record.family, record.jurisdiction, record.permit_number, reached=False)
    jurisdiction = directory.get(record.jurisdiction)
    if jurisdiction is None:
        report.error = f"unknown jurisdiction {record.jurisdiction!r}"
        return report
    started = time.perf_counter()
    try:
        snapshot = await gateway.fetch_permit(jurisdiction, record.permit_number)
    except RetryLater as exc:
        report.error = f"not reached ({exc.reason}): {exc.message}"
        return report
    except (PortalChanged, Blocked, NotFoundAtSource) as exc:
        report.reached = True
        report.error = f"{type(exc).__name__}: {exc.message}"
        report.missing = list(record.expect)  # none of them could be read
        return report
    except SourceError as exc:
        report.error = f"{type(exc).__name__}: {exc.message}"
        return report
    finally:
        report.latency_ms = round((time.perf_counter() - started) * 1000, 1)
        report.needs_browser = gateway.pages.remembered(jurisdiction.slug)
    report.reached = True
    for name in record.expect:
        problem = shape_problem(name, getattr(snapshot, name))
        if problem == "missing":
            report.missing.append(name)
        elif problem is not None:
            report.changed.append(f"{name}: {problem}")
        else:
            report.present.append(name)
    return report


def shape_problem(name: str, value: Any) -> str | None:
    """None when `value` has the shape `name` should have; "missing" or what changed."""
    if value is None or (isinstance(value, str) and not value.strip()):
        return "missing"
    if name == "status" and value == NormalizedStatus.UNKNOWN:
        return "the portal's status no longer maps to a known status"
    if name in DATE_FIELDS and not isinstance(value, date):
        return f"not a date ({type(value).__name__})"
    if name in LIST_FIELDS and not isinstance(value, list):
        return f"not a list ({type(value).__name__})"
    if name == "inspections":
        odd = [item for item in value if not _inspection_ok(item)]
        if odd:
            return f"{len(odd)} of {len(value)} entries without a type or a date/result"
    if name in TEXT_FIELDS and not isinstance(value, str):
        return f"not text ({type(value).__name__})"
    return None


def _inspection_ok(item: Any) -> bool:
    return (
        isinstance(item, Inspection)
        and bool(item.type.strip())
        and (item.date is not None or bool(item.result))
    )
