"""Render a ground-truth permit in EPIC-LA's wire formats, quirks included.

Everything is derived from the `PermitSnapshot` in the store plus a per-case random stream
seeded by the case number, so a permit changed through the control API renders consistently.
The quirks are the real layer's: a leading space in MAIN_ADDRESS, PROJECTNAME cut at 50
characters, trailing spaces on description lines, EXPIRE_DATE kept on finaled cases, a
COMPLETE_DATE proxy on some non-final cases, dates at 08:00 UTC (midnight at fixed UTC-8).
"""

from __future__ import annotations

import hashlib
import random
import uuid
from datetime import UTC, date, datetime, time, timedelta
from typing import Any

from permitapi.sources.base import NormalizedStatus as N
from permitapi.sources.base import PermitSnapshot

FINAL = frozenset({N.FINALED, N.FINALED_CONDITIONAL, N.OCCUPANCY})
CASE_NAMESPACE = uuid.UUID("7d0c3f4e-52a1-4c1e-9b7e-6c1f2e0a9d11")

FIELDS: dict[str, str] = {
    "OBJECTID": "esriFieldTypeOID",
    "CASENUMBER": "esriFieldTypeString",
    "CASENAME": "esriFieldTypeString",
    "PROJECTNAME": "esriFieldTypeString",
    "PROJECT_NAME": "esriFieldTypeString",
    "PROJECT_NUMBER": "esriFieldTypeString",
    "MODULENAME": "esriFieldTypeString",
    "WORKCLASS_NAME": "esriFieldTypeString",
    "DESCRIPTION": "esriFieldTypeString",
    "STATUS": "esriFieldTypeString",
    "APPLY_DATE": "esriFieldTypeDate",
    "ISSUANCE_DATE": "esriFieldTypeDate",
    "COMPLETE_DATE": "esriFieldTypeDate",
    "EXPIRE_DATE": "esriFieldTypeDate",
    "LAST_INSPECTION_DATE": "esriFieldTypeDate",
    "MAIN_ADDRESS": "esriFieldTypeString",
    "MAIN_AIN": "esriFieldTypeString",
    "DISTRICT_DISPLAY": "esriFieldTypeString",
    "SUP_DIST": "esriFieldTypeString",
    "PERMIT_VALUATION": "esriFieldTypeDouble",
    "NEW_DWELLING_UNITS": "esriFieldTypeInteger",
    "SPATIALTYPE": "esriFieldTypeString",
    "DISASTER_TYPE": "esriFieldTypeString",
}

WORKCLASSES: dict[str, tuple[str, ...]] = {
    "UNC-BLDR": ("New", "Addition/Alteration", "Simple", "Repair"),
    "UNC-BLDC": ("New", "Addition/Alteration", "Tenant Improvement"),
    "UNC-EXPR": ("Electrical", "Mechanical", "Plumbing", "Re-Roof", "Solar", "Temporary Housing"),
    "UNC-GRAD": ("Grading", "Grading - Minor"),
    "CREB": ("Rebuild Project",),
    "CREC": ("Rebuild",),
}


def quirks(number: str) -> random.Random:
    """The case's own random stream (independent of generation order)."""
    seed = int.from_bytes(hashlib.sha256(number.encode()).digest()[:8], "big")
    return random.Random(seed)


def prefix(number: str) -> str:
    return number[:8] if number.startswith("UNC-") else number[:4]


def module(number: str) -> str:
    return "PlanManagement" if number.startswith("CREC") else "PermitManagement"


def workclass(permit: PermitSnapshot) -> str:
    return quirks(permit.permit_number).choice(
        WORKCLASSES.get(prefix(permit.permit_number), ("New",))
    )


def case_id(number: str) -> str:
    return str(uuid.uuid5(CASE_NAMESPACE, number))


def object_id(number: str) -> int:
    return 1_000_000 + quirks(number).randrange(1, 900_000_000)


def epoch_ms(day: date | None) -> int | None:
    """Layer date: local midnight at a fixed UTC-8, i.e. 08:00 UTC, summer and winter."""
    if day is None:
        return None
    moment = datetime.combine(day, time(8, 0), tzinfo=UTC)
    return int(moment.timestamp() * 1000)


def project_name(permit: PermitSnapshot) -> str | None:
    if prefix(permit.permit_number) in ("UNC-EXPR", "UNC-GRAD") or not permit.address:
        return None
    street, _, rest = permit.address.partition(",")
    community = rest.strip().rsplit(" CA ", 1)[0]
    label = {
        "CREB": "Fire Rebuild",
        "CREC": "Like-for-Like SFR Rebuild",
        "UNC-BLDC": "Commercial Project",
    }.get(prefix(permit.permit_number), "Residential Project")
    return f"{label} @ {street}, {community}"


def _description(permit: PermitSnapshot, rng: random.Random) -> str | None:
    text = permit.work_description
    if text is None:
        return None
    lines = text.split("\n")
    # Real numbered descriptions carry trailing spaces on some lines.
    return "\n".join(line + (" " if rng.random() < 0.5 else "") for line in lines)


def last_inspection(permit: PermitSnapshot) -> date | None:
    if permit.status in FINAL and permit.finaled_date:
        return permit.finaled_date
    dates = [i.date for i in permit.inspections or () if i.date]
    if permit.status is N.INSPECTIONS:
        return max(dates) if dates else (permit.issued_date or permit.applied_date)
    if permit.status is N.ISSUED:
        return None  # a date here would read as "inspections under way"
    return max(dates) if dates else None


def attributes(permit: PermitSnapshot) -> dict[str, Any]:
    rng = quirks(permit.permit_number)
    number = permit.permit_number
    full_project = project_name(permit)
    is_plan = module(number) == "PlanManagement"
    final = permit.status in FINAL
    expires = permit.expires_date
    if final and permit.issued_date:
        expires = permit.issued_date + timedelta(days=365)  # kept on finaled cases
    complete = permit.finaled_date if final else None
    if not final and permit.status in (N.CANCELLED, N.EXPIRED) and rng.random() < 0.5:
        complete = permit.expires_date or permit.issued_date  # a proxy, not a final date
    valuation: float | int | None = permit.valuation
    if valuation is not None and float(valuation).is_integer():
        valuation = int(valuation)
    district = rng.randint(1, 5)
    return {
        "OBJECTID": object_id(number),
        "CASENUMBER": number,
        "CASENAME": permit.permit_type,
        # The 50-character cut happens on permit cases linked to a project; plan cases: "".
        "PROJECTNAME": "" if is_plan or full_project is None else full_project[:50],
        "PROJECT_NAME": full_project,
        "PROJECT_NUMBER": f"PRJ{(permit.applied_date or date(2025, 1, 1)).year}-"
        f"{rng.randint(1, 9999):06d}",
        "MODULENAME": module(number),
        "WORKCLASS_NAME": workclass(permit),
        "DESCRIPTION": _description(permit, rng),
        "STATUS": permit.raw_status,
        "APPLY_DATE": epoch_ms(permit.applied_date),
        "ISSUANCE_DATE": epoch_ms(permit.issued_date),
        "COMPLETE_DATE": epoch_ms(complete),
        "EXPIRE_DATE": epoch_ms(expires),
        "LAST_INSPECTION_DATE": epoch_ms(last_inspection(permit)),
        "MAIN_ADDRESS": None if permit.address is None else " " + permit.address,
        "MAIN_AIN": permit.parcel,
        "DISTRICT_DISPLAY": f"SD-{district}",
        "SUP_DIST": str(district),
        "PERMIT_VALUATION": valuation,
        "NEW_DWELLING_UNITS": 1 if prefix(number) in ("UNC-BLDR", "CREB") else None,
        "SPATIALTYPE": "Parcel",
        "DISASTER_TYPE": "Eaton Fire (01-2025)" if number.startswith("CR") else None,
    }


# --- EnerGov ---------------------------------------------------------------------------------


def _iso(day: date | None) -> str | None:
    return None if day is None else f"{day.isoformat()}T00:00:00"


def known_to_energov(permit: PermitSnapshot) -> bool:
    """Cases whose detail is "not observed" are also unknown to the EnerGov search."""
    return permit.workflow is not None or permit.inspections is not None


def search_entity(permit: PermitSnapshot) -> dict[str, Any]:
    final = permit.status in FINAL
    return {
        "CaseId": case_id(permit.permit_number),
        "CaseNumber": permit.permit_number,
        "CaseType": permit.permit_type,
        "CaseWorkclass": workclass(permit),
        "CaseStatus": permit.raw_status,
        "ApplyDate": _iso(permit.applied_date),
        "IssueDate": _iso(permit.issued_date),
        "ExpireDate": _iso(permit.expires_date),
        "FinalDate": _iso(permit.finaled_date if final else permit.expires_date),
        "Address": {"FullAddress": permit.address, "IsMain": True},
        "AddressDisplay": permit.address,
        "MainParcel": permit.parcel,
        "Description": permit.work_description,
        "ProjectName": project_name(permit),
        "ModuleName": 2,
    }


def envelope(result: Any) -> dict[str, Any]:
    return {
        "Result": result,
        "Success": True,
        "ErrorMessage": "",
        "ValidationErrorMessage": "",
        "ConcurrencyErrorMessage": "",
        "StatusCode": 200,
        "BrokenRules": [],
    }


def workflow(permit: PermitSnapshot) -> dict[str, Any]:
    activities = [
        {
            "ActivityName": task.name,
            "StatusName": task.status,
            "CompletedDate": _iso(task.completed_at),
            "SortOrder": index,
        }
        for index, task in enumerate(permit.workflow or ())
    ]
    return envelope({"WorkflowActivities": activities})


def inspections(permit: PermitSnapshot) -> dict[str, Any]:
    items: list[dict[str, Any]] = []
    for index, done in enumerate(permit.inspections or ()):
        items.append(
            {
                "InspectionNumber": f"INSP-{index + 1:04d}",
                "TypeName": done.type,
                "StatusName": done.result,
                "ScheduledDate": _iso(done.date),
                "ActualDate": _iso(done.date),
                "AssignedInspectorName": done.inspector,
            }
        )
    for index, pending in enumerate(permit.pending_inspections or ()):
        items.append(
            {
                "InspectionNumber": f"INSP-P{index + 1:03d}",
                "TypeName": pending.type,
                "StatusName": "Scheduled",
                "ScheduledDate": _iso(pending.date),
                "ActualDate": None,
                "AssignedInspectorName": None,
            }
        )
    return envelope({"Inspections": items})
