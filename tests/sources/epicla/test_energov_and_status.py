"""EnerGov parsers (shapes ASSUMED from generic EnerGov notes: no EPIC-LA sample exists) and the
EPIC-LA status rules."""

from __future__ import annotations

from datetime import date

import pytest

from permitapi.sources.base import NormalizedStatus as N
from permitapi.sources.epicla import energov
from permitapi.sources.epicla.status import (
    EPICLA_STATUS,
    RAW_STATUSES,
    classify_inspection_result,
    normalize_case_status,
    workflow_step_state,
)


def envelope(result: object, success: bool = True) -> dict[str, object]:
    return {
        "Result": result,
        "Success": success,
        "ErrorMessage": "" if success else "Cannot find tenant information.",
        "ValidationErrorMessage": "",
        "ConcurrencyErrorMessage": "",
        "StatusCode": 200,
        "BrokenRules": [],
    }


def test_search_result_fields() -> None:
    payload = envelope(
        {
            "EntityResults": [
                {
                    "CaseId": "3529486a-fe72-41e3-b85f-9056d48e522c",
                    "CaseNumber": "UNC-BLDR250729009231",
                    "CaseType": "Unincorporated Building Residential",
                    "CaseWorkclass": "New",
                    "CaseStatus": "Issued",
                    "ApplyDate": "2025-07-29T00:00:00",
                    "IssueDate": "2025-08-25T00:00:00",
                    "ExpireDate": "2026-08-25T00:00:00",
                    "FinalDate": None,
                    "Address": {"FullAddress": " 3245 Arrowhead Court  Altadena CA 91001"},
                    "MainParcel": "5842022003",
                    "Description": "EATON FIRE REBUILD",
                    "ProjectName": "Like-for-Like SFR Rebuild @ 3245 Arrowhead Ct",
                }
            ],
            "TotalPages": 1,
            "PermitsFound": 1,
        }
    )
    (case,) = energov.parse_search(payload)
    assert case.case_id == "3529486a-fe72-41e3-b85f-9056d48e522c"
    assert case.issued == date(2025, 8, 25)
    assert case.finaled is None
    assert case.address == "3245 Arrowhead Court Altadena CA 91001"
    assert energov.find_case([case], "unc-bldr250729009231") is case
    assert energov.find_case([case], "UNC-BLDR250729009232") is None


def test_search_body_carries_permit_criteria() -> None:
    body = energov.search_body("UNC-BLDR250729009231")
    assert body["FilterModule"] == 2
    assert body["PageNumber"] == 1
    assert body["PermitCriteria"]["PermitNumber"] == "UNC-BLDR250729009231"


def test_unavailable_shapes() -> None:
    with pytest.raises(energov.EnerGovUnavailable):
        energov.parse_search(envelope(None, success=False))
    with pytest.raises(energov.EnerGovUnavailable):
        energov.decode(b"<html>maintenance</html>")
    with pytest.raises(energov.EnerGovUnavailable):
        energov.parse_workflow(envelope({"Steps": []}))


def test_workflow_and_inspections() -> None:
    workflow = energov.parse_workflow(
        envelope(
            {
                "WorkflowActivities": [
                    {"ActivityName": "Plan Review", "StatusName": "Passed",
                     "CompletedDate": "2025-08-01T00:00:00"},
                    {"ActivityName": "Inspections", "StatusName": "Started",
                     "CompletedDate": "2025-08-02T00:00:00"},
                    {"ActivityName": "Final", "StatusName": "Scheduled for 09/15/2025",
                     "CompletedDate": None},
                ]
            }
        )
    )  # fmt: skip
    assert [(t.name, t.status, t.completed_at) for t in workflow] == [
        ("Plan Review", "Passed", date(2025, 8, 1)),
        ("Inspections", "Started", None),  # a started step has no completion date
        ("Final", "Scheduled for 09/15/2025", None),
    ]
    done, pending = energov.parse_inspections(
        envelope(
            {
                "Inspections": [
                    {"TypeName": "Framing", "StatusName": "Not Passed",
                     "ActualDate": "2025-09-01T10:30:00", "AssignedInspectorName": "R. Ortiz"},
                    {"TypeName": "Framing", "StatusName": "Passed",
                     "ActualDate": "2025-09-08T00:00:00", "AssignedInspectorName": None},
                    {"TypeName": "Final", "StatusName": "Scheduled",
                     "ScheduledDate": "2025-10-01T00:00:00", "ActualDate": None},
                ]
            }
        )
    )  # fmt: skip
    assert [(i.type, i.date, i.result, i.inspector) for i in done] == [
        ("Framing", date(2025, 9, 1), "Not Passed", "R. Ortiz"),
        ("Framing", date(2025, 9, 8), "Passed", None),
    ]
    assert [(p.type, p.date) for p in pending] == [("Final", date(2025, 10, 1))]


def test_every_research_status_is_mapped() -> None:
    research = [
        "New",
        "New - Online",
        "In Review",
        "Review",
        "Waiting for Applicant",
        "On Hold",
        "Hold",
        "Approved",
        "Approved Pending Clearances",
        "Approved Ready for Permit",
        "Zoning Cleared",
        "Accepted",
        "Issued",
        "Finaled",
        "Completed",
        "Recorded",
        "Open",
        "Exempt",
        "Expired",
        "Void",
        "Voided",
        "Canceled",
        "Cancelled",
        "Withdrawn",
        "Revoked",
        "Denied",
        "Rejected",
    ]
    for raw in research:
        assert EPICLA_STATUS.normalize(raw) is not N.UNKNOWN, raw
    assert set(research) == set(RAW_STATUSES)
    assert EPICLA_STATUS.normalize("  approved   pending clearances ") is N.APPROVED_PENDING_ISSUE
    assert EPICLA_STATUS.normalize("Plan Check Something") is N.UNKNOWN


def test_module_and_inspection_rules() -> None:
    assert normalize_case_status("Open", "PlanManagement", None) is N.IN_REVIEW
    assert normalize_case_status("Open", "PermitManagement", None) is N.ISSUED
    assert normalize_case_status("Issued", "PermitManagement", date(2026, 1, 1)) is N.INSPECTIONS
    assert normalize_case_status("Finaled", "PermitManagement", date(2026, 1, 1)) is N.FINALED


@pytest.mark.parametrize(
    ("status", "state"),
    [("Passed", "completed"), ("Pass", "completed"), ("Not Passed", "failed"),
     ("Partial Pass", "partial"), ("Started", "in_progress"), ("Scheduled", "scheduled"),
     ("Scheduled for 09/15/2025", "scheduled"), ("Whatever", "unknown")],
)  # fmt: skip
def test_workflow_step_states(status: str, state: str) -> None:
    assert workflow_step_state(status) == state


@pytest.mark.parametrize(
    ("result", "outcome"),
    [("Passed", "pass"), ("Pass", "pass"), ("Not Passed", "fail"), ("Partial Pass", "pass"),
     ("Cancelled", "other"), (None, "other")],
)  # fmt: skip
def test_inspection_outcomes(result: str | None, outcome: str) -> None:
    assert classify_inspection_result(result) == outcome
