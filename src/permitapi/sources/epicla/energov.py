"""Pure parsers for the EnerGov Citizen Self Service JSON API behind EPIC-LA.

Status: ASSUMED, not verified on EPIC-LA (research/portals.md §2.2, §5). Shapes follow the generic
EnerGov CSS notes: every answer is an envelope `{"Result": ..., "Success", "ErrorMessage",
"StatusCode", "BrokenRules"}`; calls need a `tenantId` header (HTTP 500 without it).

- search: `POST <energov>/api/energov/search/search`, body `SearchModule`/`FilterModule` (2 =
  permits)/`PageNumber`/`PageSize`/`PermitCriteria{PermitNumber,...}`; answer
  `Result.EntityResults[]` with CaseId, CaseNumber, CaseType, CaseWorkclass, CaseStatus,
  ApplyDate, IssueDate, ExpireDate, FinalDate, Address{FullAddress}, MainParcel, Description,
  ProjectName (field names as published in public EnerGov notes).
- workflow (assumed path): `GET <energov>/api/energov/case/<CaseId>/workflow`, answer
  `Result.WorkflowActivities[]` with ActivityName, StatusName, CompletedDate, ScheduledDate
  (the SPA renders `vm.workflowActivities` with the Passed/Not Passed/... states).
- inspections (assumed path): `GET <energov>/api/energov/case/<CaseId>/inspections`, answer
  `Result.Inspections[]` with InspectionNumber, TypeName, StatusName, ScheduledDate, ActualDate,
  AssignedInspectorName (names from a captured EnerGov `inspections/getById` answer).

Any shape problem raises `EnerGovUnavailable`: the adapter then reports the detail as "not
observed" (None) instead of failing a lookup whose status came from ArcGIS.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import date
from typing import Any

import orjson

from permitapi.sources.base import Inspection, PendingInspection, WorkflowTask
from permitapi.sources.epicla.status import inspection_is_pending, step_is_done

PERMIT_FILTER_MODULE = 2
SEARCH_PATH = "/api/energov/search/search"
WORKFLOW_PATH = "/api/energov/case/{case_id}/workflow"
INSPECTIONS_PATH = "/api/energov/case/{case_id}/inspections"

_ISO_DATE = re.compile(r"^(\d{4})-(\d{2})-(\d{2})")


class EnerGovUnavailable(Exception):
    """The EnerGov detail could not be read; the lookup goes on without it."""


@dataclass(frozen=True, slots=True)
class EnerGovCase:
    case_id: str
    case_number: str
    case_type: str | None
    workclass: str | None
    status: str | None
    applied: date | None
    issued: date | None
    expires: date | None
    finaled: date | None
    address: str | None
    parcel: str | None
    description: str | None
    project_name: str | None


def search_body(permit_number: str, page_size: int = 10) -> dict[str, Any]:
    return {
        "Keyword": permit_number,
        "ExactMatch": True,
        "SearchModule": PERMIT_FILTER_MODULE,
        "FilterModule": PERMIT_FILTER_MODULE,
        "SearchMainAddress": False,
        "PageNumber": 1,
        "PageSize": page_size,
        "SortBy": "relevance",
        "SortAscending": True,
        "PermitCriteria": {
            "PermitNumber": permit_number,
            "PageNumber": 1,
            "PageSize": page_size,
            "SortBy": "PermitNumber",
            "SortAscending": True,
        },
    }


def decode(content: bytes) -> Any:
    try:
        return orjson.loads(content)
    except orjson.JSONDecodeError as exc:
        raise EnerGovUnavailable(f"not JSON: {exc}") from exc


def _result(payload: Any) -> Any:
    if not isinstance(payload, Mapping) or "Result" not in payload:
        raise EnerGovUnavailable("no `Result` envelope")
    if payload.get("Success") is False:
        raise EnerGovUnavailable(f"Success=false: {payload.get('ErrorMessage') or ''}".strip())
    return payload["Result"]


def _list(container: Any, key: str) -> list[Mapping[str, Any]]:
    items = container.get(key) if isinstance(container, Mapping) else None
    if not isinstance(items, list) or not all(isinstance(i, Mapping) for i in items):
        raise EnerGovUnavailable(f"no `{key}` list")
    return items


def energov_date(value: Any) -> date | None:
    """EnerGov dates are local ISO strings ("2025-08-27T00:00:00"): the date part is the day."""
    if value in (None, ""):
        return None
    match = _ISO_DATE.match(str(value))
    if not match:
        raise EnerGovUnavailable(f"unreadable date {value!r}")
    return date(int(match[1]), int(match[2]), int(match[3]))


def _text(value: Any) -> str | None:
    if value is None:
        return None
    text = re.sub(r"[ \t\xa0]+", " ", str(value)).strip()
    return text or None


def parse_search(payload: Any) -> list[EnerGovCase]:
    entities = _list(_result(payload), "EntityResults")
    cases = []
    for entity in entities:
        case_id, number = entity.get("CaseId"), entity.get("CaseNumber")
        if not case_id or not number:
            raise EnerGovUnavailable("search result without CaseId/CaseNumber")
        address = entity.get("Address")
        full_address = address.get("FullAddress") if isinstance(address, Mapping) else None
        cases.append(
            EnerGovCase(
                case_id=str(case_id),
                case_number=str(number).strip().upper(),
                case_type=_text(entity.get("CaseType")),
                workclass=_text(entity.get("CaseWorkclass")),
                status=_text(entity.get("CaseStatus")),
                applied=energov_date(entity.get("ApplyDate")),
                issued=energov_date(entity.get("IssueDate")),
                expires=energov_date(entity.get("ExpireDate")),
                finaled=energov_date(entity.get("FinalDate")),
                address=_text(full_address or entity.get("AddressDisplay")),
                parcel=_text(entity.get("MainParcel")),
                description=_text(entity.get("Description")),
                project_name=_text(entity.get("ProjectName")),
            )
        )
    return cases


def find_case(cases: list[EnerGovCase], permit_number: str) -> EnerGovCase | None:
    wanted = permit_number.strip().upper()
    return next((case for case in cases if case.case_number == wanted), None)


def parse_workflow(payload: Any) -> list[WorkflowTask]:
    tasks = []
    for activity in _list(_result(payload), "WorkflowActivities"):
        name, status = _text(activity.get("ActivityName")), _text(activity.get("StatusName"))
        if not name or not status:
            raise EnerGovUnavailable("workflow activity without name or status")
        # A completion date only means something on a step with a result.
        completed = energov_date(activity.get("CompletedDate")) if step_is_done(status) else None
        tasks.append(WorkflowTask(name=name, status=status, completed_at=completed))
    return tasks


def parse_inspections(payload: Any) -> tuple[list[Inspection], list[PendingInspection]]:
    done: list[Inspection] = []
    pending: list[PendingInspection] = []
    for item in _list(_result(payload), "Inspections"):
        kind, status = _text(item.get("TypeName")), _text(item.get("StatusName"))
        if not kind:
            raise EnerGovUnavailable("inspection without TypeName")
        actual = energov_date(item.get("ActualDate"))
        if actual is None and (status is None or inspection_is_pending(status)):
            pending.append(
                PendingInspection(type=kind, date=energov_date(item.get("ScheduledDate")))
            )
            continue
        done.append(
            Inspection(
                type=kind,
                date=actual or energov_date(item.get("ScheduledDate")),
                result=status,
                inspector=_text(item.get("AssignedInspectorName")),
            )
        )
    return done, pending
