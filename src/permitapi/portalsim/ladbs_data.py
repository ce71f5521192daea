"""Ground truth for the simulated LADBS portal: deterministic, realistic permits.

A generated `PermitSnapshot` is exactly what a perfect adapter returns for that permit (the
rules in docs/decisions.md "LADBS"). What the PCIS page shows but a snapshot does not hold
(plan-check number, group, sub-type, office, contacts, inspector line, layout quirks) is derived
from the permit number by `presentation()`, so rendering needs nothing but the snapshot.
"""

from __future__ import annotations

import hashlib
import math
import random
from dataclasses import dataclass
from datetime import date, timedelta

from permitapi.portalsim.truth import LADBS
from permitapi.sources.base import (
    Condition,
    Inspection,
    NormalizedStatus,
    PendingInspection,
    PermitSnapshot,
    StatusEvent,
)
from permitapi.sources.registry import Jurisdiction

N = NormalizedStatus
TRADE_GROUPS = {"Electrical": "Electrical", "Plumbing": "Plumbing", "HVAC": "Mechanical"}
# The data set ends with one Building permit issued on each of this many days before today.
RECENT_ISSUE_DAYS = 7
BUILDING_TYPES = (
    "Bldg-Alter/Repair", "Bldg-New", "Bldg-Addition", "Bldg-Demolition", "Grading",
    "Swimming-Pool/Spa", "Sign", "Nonbldg-New",
)  # fmt: skip
OFFICE_CODES = {
    "Bldg-New": "010", "Bldg-Alter/Repair": "016", "Bldg-Addition": "014", "Bldg-Demolition": "019",
    "Grading": "030", "Swimming-Pool/Spa": "047", "Sign": "048", "Nonbldg-New": "020",
    "Electrical": "041", "Plumbing": "042", "HVAC": "044",
}  # fmt: skip
STREETS = (
    "S MIDVALE AVE", "W OTSEGO ST", "S STEWART AVE", "N HIGHLAND AVE", "W SUNSET BLVD",
    "S FIGUEROA ST", "E 1ST ST", "N VERMONT AVE", "W PICO BLVD", "S LA BREA AVE",
    "N ALVARADO ST", "W VENTURA BLVD", "S CENTRAL AVE", "W 3RD ST", "N EAGLE ROCK BLVD",
)  # fmt: skip
ZIPS = ("90034", "91423", "90045", "90028", "90026", "90015", "90012", "90004", "90019", "90036")
STAFF = (
    "ANDREW NAVE", "ARAM AVEDISIAN", "JOHNNY MIRANDA", "GARO TELMI", "AMIR NAKHLA",
    "ARSALAN SHABESTARI", "MICHAEL BROWN", "RICHARD WOO", "RUSSELL BONVOULOIR", "LINDA CHO",
)  # fmt: skip
WORK = {
    "Bldg-New": ("NEW SFD/GARAGE, PLAN 1BR, TRACT 50505", "(N) 2-story SFD& attached 2-car garage",
                 "NEW 5-STORY MIXED USE BUILDING W/ 48 UNITS OVER PARKING"),
    "Bldg-Alter/Repair": ("INTERIOR REMODEL TO (E) SFD TO REMOVE LOAD-BEARING WALLS.",
                          "RE-ROOF W/ CLASS A SHINGLES <2 SQUARES>", "KITCHEN & BATH REMODEL"),
    "Bldg-Addition": ("TWO STORY ADDITION TO EXISTING SINGLE FAMILY DWELLING.",
                      "ATTACHED ACCESSORY DWELLING UNIT (ADU) PER GC 66323"),
    "Bldg-Demolition": ("DEMOLISH (E) SFD AND DETACHED GARAGE",),
    "Grading": ("GPI Written Notices for the addition to the existing single-family dwelling.",
                "GRADING FOR NEW POOL, 120 CY CUT"),
    "Swimming-Pool/Spa": ("NEW POOL & SPA PER STD PLAN",),
    "Sign": ("NEW WALL SIGN, ILLUMINATED",),
    "Nonbldg-New": ("NEW 6' CMU RETAINING WALL",),
    "Electrical": ("200A UPGRADE.", "SOLAR PV SYSTEM 6.4 KW ROOF MOUNTED", "EV CHARGER 50A"),
    "Plumbing": ("REPLACE WATER HEATER", "REPIPE (E) SFD"),
    "HVAC": ("NEW HVAC SYSTEM 3 TON", "REPLACE FURNACE"),
}  # fmt: skip
INSPECTION_TYPES = {
    "Electrical": ("ELECTRICAL-Rough", "Service/Power Release", "Final"),
    "Plumbing": ("PLUMBING-Rough", "Gas Test", "Final"),
    "HVAC": ("HVAC-Rough", "HVAC-Final", "Final"),
}
BUILDING_INSPECTIONS = (
    "Footing/Foundation/Slab", "Underground Mechanical", "Floor/Roof Diaphrgm/Shear Wall",
    "BUILDING-Rough-Frame", "Insulation", "Drywall Nailing", "Interior/Exterior Lathing",
    "Green Building Rough", "SGSOV-Seismic Gas S/O Valve", "Smoke Detectors", "Final",
)  # fmt: skip
RESULTS = (
    ("Approved", 10), ("Partial Approval", 2), ("Conditional Approval", 2),
    ("Corrections Issued", 3), ("Not Ready for Inspection", 2), ("Cancelled", 1),
    ("Insp Cancelled", 1), ("Insp Scheduled", 1),
)  # fmt: skip
CLEARANCES = (
    ("Zoning Plan Check", "Department of Building and Safety"),
    ("Specific Plan", "City Planning Department"),
    ("Sewer availability", "Bureau of Engineering"),
    ("Address approval", "Bureau of Engineering"),
    ("Fire Hydrant Clearance", "Fire Department"),
    ("LAHD Replacement Units", "Housing Department"),
)
PRE_ISSUE = {N.APPLICATION_RECEIVED, N.IN_REVIEW, N.APPLICANT_ACTION, N.APPROVED_PENDING_ISSUE,
             N.ON_HOLD}  # fmt: skip
# "Completed" ends Grading pre-inspections, which are never issued (sample 26030-10000-01235)
UNISSUED_ENDINGS = {"PC Expired", "Application Withdrawn", "Not Issued", "Completed"}
FINAL_EVENTS = {"Permit Finaled", "Completed", "CofO Issued", "CofC Issued"}


def _digest(*parts: object) -> int:
    text = "|".join(str(p) for p in parts).encode()
    return int.from_bytes(hashlib.sha256(text).digest()[:8], "big")


def chance(number: str, what: str, one_in: int) -> bool:
    return _digest(number, what) % one_in == 0


@dataclass(frozen=True, slots=True)
class Quirks:
    """Layout oddities seen on real PCIS pages, chosen per permit number."""

    legacy: bool  # every section "No Data Available."; inspections only on Socrata
    status_without_date: bool  # Current Status "Issued on" with no date
    plain_status_date: bool  # "Completed on 03/06/2026" in the <dd>, zero-padded, no <span>
    nbsp_labels: bool  # labels written with &nbsp; and stray whitespace
    spaced_inspection_numbers: bool  # 9w5z `permit` with spaces instead of dashes


def quirks(number: str) -> Quirks:
    return Quirks(
        legacy=chance(number, "legacy", 12),
        status_without_date=chance(number, "nodate", 10),
        plain_status_date=chance(number, "plain", 4),
        nbsp_labels=chance(number, "nbsp", 5),
        spaced_inspection_numbers=not chance(number, "dashes", 3),
    )


@dataclass(frozen=True, slots=True)
class Presentation:
    group: str
    plan_check_number: str
    sub_type: str
    issuing_office: str
    business_unit: str
    contractor: str
    inspector: str


def group_of(permit_type: str | None) -> str:
    return TRADE_GROUPS.get(permit_type or "", "Building")


def presentation(snapshot: PermitSnapshot) -> Presentation:
    number = snapshot.permit_number
    h = _digest(number, "presentation")
    group = group_of(snapshot.permit_type)
    prefix = {"Electrical": "X", "Plumbing": "P", "Mechanical": "M"}.get(group, "B")
    inspector = next((i.inspector for i in snapshot.inspections or () if i.inspector), None)
    return Presentation(
        group=group,
        plan_check_number=f"{prefix}{number[:2]}LA{h % 100000:05d}",
        sub_type=("1 or 2 Family Dwelling", "Apartment", "Commercial")[h % 3],
        issuing_office=("Metro", "Van Nuys", "West LA", "South LA", "San Pedro")[h % 5],
        business_unit=("Regular Plan Check", "Express Permit", "Plan Check at Counter")[h % 3],
        contractor=f"{('Kelley Joel', 'Pacific', 'Westside', 'Valley')[h % 4]} Builders; "
        f"Lic. No.: {800000 + h % 199999}-B",
        inspector=f"{inspector or STAFF[h % len(STAFF)]}, (310) 914-{3800 + h % 200}",
    )


def _pick_weighted(rng: random.Random, options: tuple[tuple[str, int], ...]) -> str:
    return rng.choices([o for o, _ in options], [w for _, w in options])[0]


class _Builder:
    def __init__(self, jurisdiction: Jurisdiction, rng: random.Random, today: date) -> None:
        self.jurisdiction = jurisdiction
        self.rng = rng
        self.today = today
        self.used: set[str] = set()

    def number(self, permit_type: str, applied: date) -> str:
        while True:
            middle = self.rng.choice(("10000", "20000", "20000", "90000", "20001"))
            number = (
                f"{applied.year % 100:02d}{OFFICE_CODES[permit_type]}-{middle}"
                f"-{self.rng.randint(1, 29999):05d}"
            )
            if number not in self.used:
                self.used.add(number)
                return number

    def point(self) -> tuple[float, float]:
        lat0, lon0 = self.jurisdiction.center
        radius_km = self.jurisdiction.radius_km * 0.7 * math.sqrt(self.rng.random())
        angle = self.rng.uniform(0, 2 * math.pi)
        lat = lat0 + radius_km * math.cos(angle) / 111.32
        lon = lon0 + radius_km * math.sin(angle) / (111.32 * math.cos(math.radians(lat0)))
        return round(lat, 6), round(lon, 6)

    def day_after(self, start: date, low: int, high: int) -> date:
        return min(start + timedelta(days=self.rng.randint(low, high)), self.today)

    def inspections(
        self, permit_type: str, start: date, end: date, final: bool
    ) -> list[Inspection]:
        types = INSPECTION_TYPES.get(permit_type, BUILDING_INSPECTIONS)
        rng = self.rng
        events: list[Inspection] = []
        day = start
        for kind in types[:-1]:
            if day >= end:
                break
            day = min(day + timedelta(days=rng.randint(3, 40)), end)
            result = _pick_weighted(rng, RESULTS)
            events.append(Inspection(kind, day, result, rng.choice(STAFF)))
            if result in ("Corrections Issued", "Not Ready for Inspection"):
                day = min(day + timedelta(days=rng.randint(2, 14)), end)
                events.append(Inspection(kind, day, "Approved", rng.choice(STAFF)))
        if final:
            events.append(Inspection("Final", end, "Permit Finaled", rng.choice(STAFF)))
        return sorted(events, key=lambda i: i.date or date.min, reverse=True)

    def permit(self, raw_status: str, issued_on: date | None = None) -> PermitSnapshot:
        """One permit whose Current Status is `raw_status`; `issued_on` fixes the issue date
        of an issued-class status (the application date then precedes it)."""
        rng = self.rng
        mapped = LADBS[raw_status]
        unissued = mapped in PRE_ISSUE or raw_status in UNISSUED_ENDINGS
        trade = (
            not unissued and raw_status != "Completed" and issued_on is None and rng.random() < 0.3
        )
        if trade:
            permit_type = rng.choice(("Electrical", "Plumbing", "HVAC"))
        else:
            permit_type = BUILDING_TYPES[rng.randrange(len(BUILDING_TYPES))]
        if raw_status == "Completed":
            permit_type = "Grading"  # GPI pre-inspections end "Completed" (sample 26030-…)
        applied = self.today - timedelta(days=rng.randint(20, 8 * 365))
        if issued_on is not None:
            applied = issued_on - timedelta(days=rng.randint(10, 200))
        number = self.number(permit_type, applied)
        q = quirks(number)
        timeline: list[StatusEvent] = []
        conditions: list[Condition] = []
        inspections: list[Inspection] = []
        pending: list[PendingInspection] = []
        issued: date | None = None
        if not trade:
            timeline.append(StatusEvent("Submitted", applied, actor="APPLICANT"))
        cursor = applied
        if unissued:
            for event in ("PC Assigned", "Corrections Issued", "PC Info Complete"):
                if rng.random() < 0.5 and event != raw_status:
                    cursor = self.day_after(cursor, 2, 40)
                    timeline.append(
                        StatusEvent(event, cursor, is_correction=event == "Corrections Issued",
                                    actor=rng.choice(STAFF))
                    )  # fmt: skip
            for name, department in rng.sample(CLEARANCES, rng.randint(0, 4)):
                met = rng.random() < 0.5
                when = self.day_after(applied, 0, 90)
                conditions.append(
                    Condition(name, "Cleared" if met else "Not Cleared",
                              group=None if met else department, is_met=met, status_date=when)
                )  # fmt: skip
        else:
            issued = cursor = issued_on or self.day_after(applied, 0 if trade else 10, 200)
            timeline.append(StatusEvent("Issued", issued, actor="LADBS"))
        status_day = self.day_after(cursor, 1, 400)
        final_status = mapped in (N.FINALED, N.OCCUPANCY) and raw_status != "Permit Closed"
        if issued is not None and (raw_status != "Issued" or rng.random() < 0.7):
            inspections = self.inspections(permit_type, issued, status_day, final_status)
        if mapped is N.OCCUPANCY and raw_status != "CofO Corrected":
            timeline.append(StatusEvent("Permit Finaled", status_day, actor=rng.choice(STAFF)))
        if raw_status == "Permit Finaled":
            # the history row can be a day before the Current Status date (sample 16041-…)
            final_day = status_day - timedelta(days=rng.choice((0, 1)))
            timeline.append(StatusEvent("Permit Finaled", final_day, actor=rng.choice(STAFF)))
        elif raw_status not in ("Issued",) or issued is None:
            timeline.append(
                StatusEvent(raw_status, status_day, is_correction=raw_status in
                            ("Corrections Issued", "Re-Submittal Required"),
                            actor=rng.choice(STAFF))
            )  # fmt: skip
        if mapped is N.ISSUED and raw_status != "Issued" and rng.random() < 0.6:
            pending.append(PendingInspection("Final", self.day_after(status_day, 1, 20)))
        if raw_status == "Issued":
            status_day = issued or status_day
        lat, lon = self.point()
        street = f"{rng.randint(100, 19999)} {rng.choice(STREETS)}"
        zip_code = rng.choice(ZIPS)
        valuation: float | None = float(rng.choice((0, 5000, 10000, 25000, 85000, 556000)))
        if rng.random() < 0.2:
            valuation = rng.randint(1000, 2_000_000) + 0.5
        if q.legacy:
            timeline, conditions, pending = [], [], []
            inspections = [Inspection(i.type, i.date, i.result) for i in inspections]
        status_date: date | None = status_day
        if q.status_without_date:
            same = [e.changed_at for e in timeline if e.status == raw_status and e.changed_at]
            status_date = max(same) if same else None
        normalized = LADBS.get(raw_status, N.UNKNOWN)
        if normalized is N.ISSUED and inspections:
            normalized = N.INSPECTIONS
        finaled: date | None = None
        if normalized in (N.FINALED, N.FINALED_CONDITIONAL, N.OCCUPANCY):
            finals = [e.changed_at for e in timeline if e.status in FINAL_EVENTS and e.changed_at]
            if finals:
                finaled = max(finals)
            elif raw_status in FINAL_EVENTS:
                finaled = status_date
        building = group_of(permit_type) == "Building"
        return PermitSnapshot(
            jurisdiction=self.jurisdiction.slug,
            permit_number=number,
            raw_status=raw_status,
            status=normalized,
            status_date=status_date,
            permit_type=permit_type,
            address=f"{street} {zip_code}",
            work_description=rng.choice(WORK[permit_type]),
            applied_date=None if trade else applied,
            issued_date=issued,
            finaled_date=finaled,
            expires_date=status_date if normalized is N.EXPIRED else None,
            valuation=valuation if building else None,
            parcel=f"{rng.randint(2000, 7599)}{rng.randint(0, 999999):06d}" if building else None,
            latitude=lat if building else None,
            longitude=lon if building else None,
            inspections=inspections,
            pending_inspections=pending,
            conditions=conditions,
            timeline=timeline,
            workflow=None,
        )


def generate_permits(
    jurisdiction: Jurisdiction, rng: random.Random, count: int, today: date
) -> list[PermitSnapshot]:
    """`count` permits; the first ones walk the whole status vocabulary so every raw LADBS value
    appears, the rest follow a realistic mix (most permits are issued or finaled). The last
    RECENT_ISSUE_DAYS are Building permits issued on each of the days before `today`: LADBS
    issues permits every working day and gwh9-jnip refreshes daily, so the data set's newest
    issue date is recent whatever day the simulator starts on (a spread of ~2,000 issuances over
    eight years left gaps of a week or more, which the adapter rightly calls lagging)."""
    builder = _Builder(jurisdiction, rng, today)
    vocabulary = list(LADBS)
    common = (("Permit Finaled", 30), ("Issued", 25), ("CofO Issued", 8), ("PC Approved", 5),
              ("Corrections Issued", 6), ("Quality Review Completed", 5), ("Permit Expired", 5),
              ("Verifications in Progress", 5), ("CofO in Progress", 4), ("Submitted", 3),
              ("Permit Closed", 2), ("Refund Completed", 1), ("Plans on Hold", 1))  # fmt: skip
    permits = []
    recent_from = max(len(vocabulary), count - RECENT_ISSUE_DAYS)
    for index in range(count):
        if index >= recent_from:
            day = today - timedelta(days=count - index)
            permits.append(builder.permit("Issued", issued_on=day))
            continue
        raw = vocabulary[index] if index < len(vocabulary) else _pick_weighted(rng, common)
        permits.append(builder.permit(raw))
    return permits
