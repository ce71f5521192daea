"""Deterministic ground-truth ACA records for one agency.

Each record walks Accela's usual workflow (Application Submittal -> Plan Review with
discipline sub-reviews -> Permit Issuance -> Inspections -> Closure/Certification) as far as
its lifecycle stage. Its raw status is a label that agency publishes for that stage, so the
normalized ground truth is the stage itself; the labels of a stage come from the
simulator's own vocabulary (`portalsim.truth`), never from the adapter's table.
"""

from __future__ import annotations

import random
import re
from collections.abc import Sequence
from datetime import date, timedelta

from permitapi.portalsim.aca.numbers import sample_number
from permitapi.portalsim.truth import aca_vocabulary
from permitapi.sources.base import (
    Condition,
    Inspection,
    PendingInspection,
    PermitSnapshot,
    StatusEvent,
    WorkflowTask,
)
from permitapi.sources.base import (
    NormalizedStatus as S,
)
from permitapi.sources.registry import Jurisdiction

STAGES: tuple[tuple[S, int], ...] = (
    (S.APPLICATION_RECEIVED, 6), (S.IN_REVIEW, 10), (S.APPLICANT_ACTION, 6),
    (S.APPROVED_PENDING_ISSUE, 6), (S.ON_HOLD, 3), (S.ISSUED, 12), (S.INSPECTIONS, 14),
    (S.FINALED, 14), (S.OCCUPANCY, 5), (S.EXPIRED, 5), (S.CANCELLED, 6), (S.UNKNOWN, 2),
)  # fmt: skip
ISSUED_STAGES = frozenset({S.ISSUED, S.INSPECTIONS, S.FINALED, S.OCCUPANCY, S.EXPIRED})
# Labels some tenants publish that have no normalized meaning (KINGCO enforcement cases).
UNMAPPED = ("Case Opened with Violation Ltr", "Case Opened No Violation Ltr", "Pending Review")

RECORD_TYPES = (
    "Building/Residential/New/NA", "Building/Residential/Alteration/NA",
    "Building/Residential/Addition/NA", "Building/Commercial/New/NA",
    "Building/Commercial/Tenant Improvement/NA", "Building/Residential/Roof/NA",
    "Building/Residential/Solar/NA", "Building/Residential/Pool/NA",
)  # fmt: skip
DESCRIPTIONS = (
    "NEW 2-STORY SINGLE FAMILY DWELLING WITH ATTACHED 2-CAR GARAGE",
    "KITCHEN AND BATH REMODEL, NO STRUCTURAL CHANGES", "REROOF 32 SQUARES, CLASS A SHINGLES",
    "ROOF-MOUNTED PV SYSTEM 7.2 KW, 18 MODULES", "TENANT IMPROVEMENT FOR RETAIL SUITE 120",
    "ADDITION OF 450 SF MASTER SUITE", "IN-GROUND POOL AND SPA WITH EQUIPMENT",
    "ACCESSORY DWELLING UNIT 800 SF, DETACHED",
)  # fmt: skip
STREETS = ("MAIN ST", "OAK AVE", "NE 159TH ST", "S LAKERIDGE DR", "W PALM DR", "ELM CT",
           "SUNSET BLVD", "SE COVINGTON SAWYER RD", "MISSION RD", "2ND AVE S")  # fmt: skip
INSPECTION_TYPES = ("Footing", "Foundation", "Underground Plumbing", "Rough Framing",
                    "Rough Electrical", "Insulation", "Drywall Nailing", "Roof Sheathing",
                    "Final Building", "Final Electrical")  # fmt: skip
RESULTS = ("Pass", "Pass", "Approved", "Fail", "Corrections Required", "Partial Approval",
           "Cancelled", "Not Ready")  # fmt: skip
INSPECTORS = ("R. Alvarez", "K. Nguyen", "D. Okafor", "S. Patel", None)
STAFF = ("M. Lopez", "J. Chen", "A. Brooks", "T. Ramirez")
CONDITIONS = (
    ("Fire Sprinkler Plan Approval", "Fire"), ("Grading Certification", "Public Works"),
    ("School Fees Paid", "Building"), ("Final Survey Required", "Planning"),
    ("Special Inspection Agreement", "Building"),
)  # fmt: skip
CONDITION_STATUSES = ("Applied", "Met", "Not Applied")


def raw_labels(slug: str, stage: S) -> list[str]:
    if stage is S.UNKNOWN:
        return list(UNMAPPED)
    return sorted(raw for raw, status in aca_vocabulary(slug).items() if status is stage)


def _address(rng: random.Random, jurisdiction: Jurisdiction) -> str | None:
    roll = rng.random()
    if roll < 0.03:
        return "United States"  # seen on KINGCO: a record with no street address
    if roll < 0.06:
        return None
    zip_code = f"{rng.randint(90001, 99403)}"
    city = jurisdiction.display_name.removeprefix("City of ").removeprefix("County of ").upper()
    return (
        f"{rng.randint(100, 39999)} {rng.choice(STREETS)}, {city} {jurisdiction.state} {zip_code}"
    )


class _Workflow:
    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.tasks: list[WorkflowTask] = []
        self.events: list[StatusEvent] = []
        self.finals: list[date] = []

    def task(self, name: str, events: Sequence[tuple[str, date | None]], *, done: bool) -> None:
        for status, when in events:
            actor = self.rng.choice(STAFF) if self.rng.random() < 0.7 else None
            self.events.append(StatusEvent(status, when, discipline=name, actor=actor))
        if events:
            last_status, last_on = events[-1]
            self.tasks.append(WorkflowTask(name, last_status, last_on if done else None))
        else:
            self.tasks.append(WorkflowTask(name, "In Progress" if done else "Pending"))


def _stage_events(flow: _Workflow, stage: S, applied: date, slug: str) -> tuple[date | None, S]:
    """Build the workflow up to `stage`; returns (issued date, stage actually reached)."""
    rng = flow.rng
    day = applied

    def later(low: int = 2, high: int = 40) -> date:
        nonlocal day
        day = day + timedelta(days=rng.randint(low, high))
        return day

    flow.task("Application Submittal", [("Received", applied)], done=True)
    if rng.random() < 0.08:  # legacy migrated record: an undated intake step
        flow.task("Document Submittal", [("Accepted", None)], done=True)
    if stage is S.APPLICATION_RECEIVED:
        flow.task("Plan Review", [], done=False)
        return None, stage
    review = [("In Review", later())]
    if stage is S.APPLICANT_ACTION:
        flow.task("Plan Review", [*review, ("Revisions Required", later())], done=False)
        return None, stage
    if stage in (S.IN_REVIEW, S.UNKNOWN):
        flow.task("Plan Review", review, done=False)
        flow.task("Building Review", [("In Review", later())], done=False)
        return None, stage
    if stage is S.ON_HOLD:
        flow.task("Plan Review", [*review, ("On Hold", later())], done=False)
        return None, stage
    if stage is S.CANCELLED:
        flow.task("Plan Review", review, done=False)
        flow.task("Closure", [(rng.choice(("Withdrawn", "Void")), later())], done=True)
        return None, stage
    flow.task("Plan Review", [*review, ("Approved", later())], done=True)
    flow.task("Building Review", [("Approved", later(0, 5))], done=True)
    if rng.random() < 0.5:
        flow.task("Fire Review", [("Approved", later(0, 5))], done=True)
    if stage is S.APPROVED_PENDING_ISSUE:
        flow.task("Permit Issuance", [("Ready to Issue", later())], done=False)
        return None, stage
    issued = later()
    flow.task("Permit Issuance", [("Ready to Issue", later(0, 0)), ("Issued", issued)], done=True)
    if stage is S.ISSUED:
        flow.task("Inspections", [], done=False)
        return issued, stage
    if stage is S.EXPIRED:
        flow.task("Closure", [("Expired", later(180, 400))], done=True)
        return issued, stage
    if stage is S.INSPECTIONS:
        flow.task("Inspections", [("Inspecting", later())], done=False)
        return issued, stage
    inspecting = later(1, 20)
    final = later(30, 200)
    flow.task("Inspections", [("Inspecting", inspecting), ("Final", final)], done=True)
    flow.finals.append(final)
    if stage is S.OCCUPANCY:
        occupancy = later(1, 20)
        flow.task("Certification", [("Certificate of Occupancy", occupancy)], done=True)
        flow.finals.append(occupancy)
    return issued, stage


def _inspections(
    rng: random.Random, stage: S, issued: date | None, today: date
) -> tuple[list[Inspection], list[PendingInspection]]:
    if issued is None or stage is S.ISSUED:
        return [], []
    done: list[Inspection] = []
    day = issued
    for kind in rng.sample(INSPECTION_TYPES[:8], rng.randint(1, 5)):
        day = day + timedelta(days=rng.randint(3, 30))
        done.append(Inspection(kind, day, rng.choice(RESULTS), rng.choice(INSPECTORS)))
    if stage in (S.FINALED, S.OCCUPANCY):
        done.append(Inspection("Final Building", day + timedelta(days=7), "Pass", "K. Nguyen"))
    pending: list[PendingInspection] = []
    if stage is S.INSPECTIONS:
        for kind in rng.sample(INSPECTION_TYPES[5:], rng.randint(0, 2)):
            when = None if rng.random() < 0.4 else today + timedelta(days=rng.randint(1, 14))
            pending.append(PendingInspection(kind, when))
    return list(reversed(done)), pending  # ACA lists the newest first


def generate_records(
    jurisdiction: Jurisdiction, rng: random.Random, count: int, today: date
) -> list[PermitSnapshot]:
    slug = jurisdiction.slug
    pattern = jurisdiction.permit_patterns[0].pattern
    weights = [w for _, w in STAGES]
    seen: set[str] = set()
    records: list[PermitSnapshot] = []
    while len(records) < count:
        number = sample_number(pattern, rng)
        # Sibling numbers (BLD24-0123 / BLD24-01234) make a search by the shorter one list
        # both in a grid instead of redirecting straight to the record.
        if records and rng.random() < 0.3:
            sibling = records[-1].permit_number + rng.choice("0123456789")
            if re.fullmatch(pattern, sibling):
                number = sibling
        if number in seen:
            continue
        seen.add(number)
        stage = rng.choices([s for s, _ in STAGES], weights)[0]
        labels = raw_labels(slug, stage)
        if not labels:
            continue
        applied = today - timedelta(days=rng.randint(400, 1400))
        flow = _Workflow(rng)
        issued, _ = _stage_events(flow, stage, applied, slug)
        timeline = sorted(flow.events, key=lambda e: (e.changed_at is None, e.changed_at or 0))
        dated = [e.changed_at for e in timeline if isinstance(e.changed_at, date)]
        done, pending = _inspections(rng, stage, issued, today)
        conditions = [
            Condition(
                name=name,
                status=(status := rng.choice(CONDITION_STATUSES)),
                group=group,
                is_met=status != "Applied",
                status_date=applied + timedelta(days=rng.randint(1, 60)),
            )
            for name, group in rng.sample(CONDITIONS, rng.choice((0, 0, 1, 2, 3)))
        ]
        value = round(rng.uniform(800, 950_000), 2) if rng.random() < 0.9 else None
        parcel = f"{rng.randint(100, 999)}-{rng.randint(100, 999)}-{rng.randint(10, 99)}-00"
        records.append(
            PermitSnapshot(
                jurisdiction=slug,
                permit_number=number,
                raw_status=rng.choice(labels),
                status=stage,
                status_date=max(dated) if dated else None,
                permit_type=rng.choice(RECORD_TYPES),
                address=_address(rng, jurisdiction),
                work_description=rng.choice(DESCRIPTIONS) if rng.random() < 0.9 else None,
                applied_date=applied,
                issued_date=issued,
                finaled_date=max(flow.finals) if flow.finals else None,
                # The record header shows "Expiration Date:" once a permit is issued.
                expires_date=issued + timedelta(days=365)
                if issued is not None and stage in (S.ISSUED, S.INSPECTIONS, S.EXPIRED)
                else None,
                valuation=value,
                parcel=parcel if rng.random() < 0.9 else None,
                inspections=done if jurisdiction.anonymous_inspections else None,
                pending_inspections=pending if jurisdiction.anonymous_inspections else None,
                conditions=conditions,
                timeline=timeline,
                workflow=flow.tasks,
            )
        )
    return records
