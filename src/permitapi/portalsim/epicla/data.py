"""Deterministic, realistic EPIC-LA ground truth (what a perfect adapter returns).

Case numbers follow the real formats: `UNC-BLDR|BLDC|EXPR|GRAD` + YYMMDD (= APPLY_DATE) + a
6-digit sequence, and `CREB|CREC` + YYYY + 6 digits. Statuses cover the whole EPIC-LA
vocabulary (research §2.5); dates are coherent with the status; locations fall in
unincorporated county communities inside the directory's circle. Case 0 is the layer's known
kind of outlier: a grading case applied for and issued in the future.
"""

from __future__ import annotations

import random
from datetime import date, timedelta

from permitapi.sources.base import Inspection, PendingInspection, PermitSnapshot, WorkflowTask
from permitapi.sources.base import NormalizedStatus as N
from permitapi.sources.registry import Jurisdiction

# (prefix, EnerGov case type, weight)
KINDS = (
    ("UNC-BLDR", "Unincorporated Building Residential", 36),
    ("UNC-BLDC", "Unincorporated Building Commercial", 12),
    ("UNC-EXPR", "Unincorporated Express Permit", 18),
    ("UNC-GRAD", "Unincorporated Grading", 8),
    ("CREB", "County Disaster Recovery Permit", 14),
    ("CREC", "County Disaster Recovery Permit", 12),
)
# (raw STATUS, normalised, weight) for permit cases; `Issued`/`Open` appear twice because the
# normalised value depends on inspection activity.
PERMIT_STATUSES = (
    ("New", N.APPLICATION_RECEIVED, 3), ("New - Online", N.APPLICATION_RECEIVED, 2),
    ("Accepted", N.APPLICATION_RECEIVED, 2), ("In Review", N.IN_REVIEW, 5),
    ("Review", N.IN_REVIEW, 2), ("Zoning Cleared", N.IN_REVIEW, 1), ("Exempt", N.IN_REVIEW, 1),
    ("Waiting for Applicant", N.APPLICANT_ACTION, 3), ("Approved", N.APPROVED_PENDING_ISSUE, 1),
    ("Approved Pending Clearances", N.APPROVED_PENDING_ISSUE, 3),
    ("Approved Ready for Permit", N.APPROVED_PENDING_ISSUE, 2), ("Hold", N.ON_HOLD, 1),
    ("On Hold", N.ON_HOLD, 1), ("Issued", N.ISSUED, 8), ("Issued", N.INSPECTIONS, 10),
    ("Open", N.ISSUED, 1), ("Open", N.INSPECTIONS, 2), ("Finaled", N.FINALED, 12),
    ("Completed", N.FINALED, 2), ("Recorded", N.FINALED, 1), ("Expired", N.EXPIRED, 4),
    ("Void", N.CANCELLED, 1), ("Voided", N.CANCELLED, 1), ("Canceled", N.CANCELLED, 1),
    ("Cancelled", N.CANCELLED, 1), ("Withdrawn", N.CANCELLED, 2), ("Revoked", N.CANCELLED, 1),
    ("Denied", N.CANCELLED, 1), ("Rejected", N.CANCELLED, 1),
)  # fmt: skip
PLAN_STATUSES = (
    ("Open", N.IN_REVIEW, 10), ("In Review", N.IN_REVIEW, 3),
    ("Approved", N.APPROVED_PENDING_ISSUE, 2),
    ("Waiting for Applicant", N.APPLICANT_ACTION, 2), ("Completed", N.FINALED, 2),
    ("Withdrawn", N.CANCELLED, 1),
)  # fmt: skip
# Unincorporated communities: (name, ZIP, latitude, longitude)
COMMUNITIES = (
    ("Altadena", "91001", 34.1897, -118.1312), ("East Los Angeles", "90022", 34.0239, -118.1720),
    ("Hacienda Heights", "91745", 33.9931, -117.9687),
    ("Rowland Heights", "91748", 33.9761, -117.9053),
    ("Castaic", "91384", 34.4889, -118.6229), ("Acton", "93510", 34.4700, -118.1962),
    ("Lake Los Angeles", "93591", 34.6122, -117.8281), ("Quartz Hill", "93536", 34.6453, -118.2181),
    ("Topanga", "90290", 34.0939, -118.6018), ("Ladera Heights", "90056", 33.9944, -118.3748),
    ("Florence-Firestone", "90001", 33.9615, -118.2438), ("Valinda", "91744", 34.0453, -117.9434),
    ("Stevenson Ranch", "91381", 34.3906, -118.5790), ("Agua Dulce", "91390", 34.4964, -118.3256),
    ("La Crescenta-Montrose", "91214", 34.2322, -118.2353),
    ("Walnut Park", "90255", 33.9683, -118.2220),
)  # fmt: skip
STREETS = (
    "Lake Avenue",
    "Mariposa Street",
    "Arrowhead Court",
    "Monterosa Drive",
    "Punahou Street",
    "Pentagon Street",
    "Foothill Boulevard",
    "Sierra Highway",
    "Avenue K",
    "Colima Road",
    "Whittier Boulevard",
    "Topanga Canyon Boulevard",
    "Soledad Canyon Road",
    "Fairview Avenue",
    "Santa Anita Avenue",
    "Valley View Road",
    "Oak Grove Drive",
    "Cedar Lane",
    "Vista Drive",
)
INSPECTORS = ("M. Reyes", "D. Chen", "A. Patel", "K. Johnson", "L. Nguyen", "S. Romero", None)
INSPECTION_TYPES = (
    "Footing/Foundation",
    "Underfloor",
    "Framing",
    "Rough Electrical",
    "Rough Plumbing",
    "Rough Mechanical",
    "Insulation",
    "Drywall",
    "Roof Sheathing",
)
RESULTS = ("Passed", "Passed", "Passed", "Pass", "Not Passed", "Partial Pass", "Cancelled")
DESCRIPTIONS = {
    "UNC-BLDR": (
        "NEW {n} SF SINGLE FAMILY RESIDENCE WITH ATTACHED {g} SF GARAGE",
        "Addition of {n} sq. ft. to existing single-family dwelling",
        "1. NEW {n} SF ADU\n2. CONVERT {g} SF GARAGE TO JUNIOR ADU\n3. NEW 50 SF PORCH",
        "Kitchen and bathroom remodel, no structural changes",
    ),
    "UNC-BLDC": (
        "TENANT IMPROVEMENT OF {n} SF RETAIL SPACE",
        "NEW {n} SF WAREHOUSE BUILDING",
        "1. REROOF {n} SF COMMERCIAL BUILDING\n2. REPLACE 4 ROOFTOP UNITS",
    ),
    "UNC-EXPR": (
        "Install {n} kW roof-mounted solar PV system",
        "Replace 200A electrical service panel",
        "Water heater replacement",
        "Replace HVAC condenser and furnace, like for like",
    ),
    "UNC-GRAD": (
        "GRADING {n} CY CUT, {g} CY FILL FOR NEW SFR PAD",
        "Remedial grading and drainage",
    ),
    "CREB": (
        "EATON FIRE REBUILD - NEW {n} SF SFR WITH {g} SF ATTACHED GARAGE",
        "1. EATON FIRE REBUILD - NEW 2-STORY {n} SF SFR\n2. EATON FIRE REBUILD - NEW {g} SF ADU",
    ),
    "CREC": ("(EATON FIRE LIKE FOR LIKE) New single family home, {n} SF.",),
}
VALUATIONS = {
    "UNC-BLDR": (20_000, 1_200_000), "UNC-BLDC": (50_000, 5_000_000),
    "UNC-EXPR": (1_000, 60_000), "UNC-GRAD": (5_000, 300_000), "CREB": (200_000, 1_500_000),
}  # fmt: skip
# Minimum age in days of the application for the status to have its dates in the past.
MIN_AGE = {N.FINALED: 150, N.EXPIRED: 560, N.INSPECTIONS: 40, N.ISSUED: 12, N.CANCELLED: 20}
DISASTER_START = date(2025, 1, 15)


def _weighted(rng: random.Random, items: tuple[tuple[str, N, int], ...]) -> tuple[str, N]:
    raw, status, _ = rng.choices(items, weights=[w for *_, w in items])[0]
    return raw, status


def _between(rng: random.Random, start: date, end: date) -> date:
    return start + timedelta(days=rng.randint(0, max(0, (end - start).days)))


class _Generator:
    def __init__(self, jurisdiction: Jurisdiction, rng: random.Random, today: date) -> None:
        self.jurisdiction = jurisdiction
        self.rng = rng
        self.today = today
        self.sequence = rng.randint(1_000, 3_000)
        self.year_sequence: dict[tuple[str, int], int] = {}

    def number(self, kind: str, applied: date) -> str:
        if kind.startswith("UNC-"):
            self.sequence += self.rng.randint(1, 40)
            return f"{kind}{applied:%y%m%d}{self.sequence:06d}"
        key = (kind, applied.year)
        self.year_sequence[key] = self.year_sequence.get(key, self.rng.randint(20, 400)) + 1
        return f"{kind}{applied.year}{self.year_sequence[key]:06d}"

    def applied(self, kind: str, status: N) -> date:
        min_age = MIN_AGE.get(status, 1)
        oldest = self.today - timedelta(days=5 * 365)
        if kind.startswith("CR") and self.today - DISASTER_START > timedelta(days=min_age + 30):
            oldest = DISASTER_START
        newest = self.today - timedelta(days=min_age)
        if status is N.APPLICATION_RECEIVED:
            oldest = max(oldest, self.today - timedelta(days=60))
        return _between(self.rng, min(oldest, newest), newest)

    def address(self) -> tuple[str, float, float]:
        name, zip_code, lat, lon = self.rng.choice(COMMUNITIES)
        street = self.rng.choice(STREETS)
        number = self.rng.randint(100, 39999)
        latitude = round(lat + self.rng.uniform(-0.015, 0.015), 7)
        longitude = round(lon + self.rng.uniform(-0.015, 0.015), 7)
        return f"{number} {street}, {name} CA {zip_code}", latitude, longitude

    def description(self, kind: str) -> str:
        template = self.rng.choice(DESCRIPTIONS[kind])
        text = template.format(n=self.rng.randint(2, 40) * 100, g=self.rng.randint(2, 6) * 100)
        return text if self.rng.random() < 0.7 else text.capitalize()

    def permit(self, index: int) -> PermitSnapshot:
        rng = self.rng
        kind, case_type, _ = rng.choices(KINDS, weights=[k[2] for k in KINDS])[0]
        raw, status = _weighted(rng, PLAN_STATUSES if kind == "CREC" else PERMIT_STATUSES)
        future = index == 0
        if future:  # the future-dated outlier
            kind, case_type, raw, status = "UNC-GRAD", "Unincorporated Grading", "Issued", N.ISSUED
        applied = (
            self.today + timedelta(days=rng.randint(150, 330))
            if future
            else self.applied(kind, status)
        )
        issued = finaled = expires = None
        if status in (N.ISSUED, N.INSPECTIONS, N.FINALED, N.EXPIRED) or (
            status is N.CANCELLED and raw in ("Revoked", "Void") and kind != "CREC"
        ):
            latest = applied + timedelta(days=10) if future else self.today - timedelta(days=2)
            if status is N.INSPECTIONS:
                latest = self.today - timedelta(days=20)
            if status is N.FINALED:
                latest = self.today - timedelta(days=60)
            issued = _between(
                rng, applied + timedelta(days=1), min(applied + timedelta(days=150), latest)
            )
            if status is not N.CANCELLED:
                expires = issued + timedelta(days=365)
        if status is N.FINALED:
            start = issued or applied
            finaled = _between(rng, start + timedelta(days=20), self.today - timedelta(days=1))
            expires = None  # the layer keeps EXPIRE_DATE on finaled cases; we do not expose it
        if status is N.EXPIRED and expires is not None and expires >= self.today:
            expires = self.today - timedelta(days=rng.randint(1, 90))
        address, latitude, longitude = self.address()
        low_high = VALUATIONS.get(kind)
        valuation = None
        if low_high and rng.random() < 0.92:
            valuation = float(rng.randint(low_high[0] // 100, low_high[1] // 100) * 100)
            if rng.random() < 0.2:
                valuation += rng.randint(1, 99)
        observed = rng.random() < 0.88  # EnerGov detail answers for most cases
        snapshot = PermitSnapshot(
            jurisdiction=self.jurisdiction.slug,
            permit_number=self.number(kind, applied),
            raw_status=raw,
            status=status,
            permit_type=case_type,
            address=address,
            work_description=self.description(kind),
            applied_date=applied,
            issued_date=issued,
            finaled_date=finaled,
            expires_date=expires,
            valuation=valuation,
            parcel=f"{rng.randint(2000, 8999):04d}{rng.randint(0, 999_999):06d}",
            latitude=latitude,
            longitude=longitude,
            conditions=None,
            timeline=None,
        )
        snapshot.status_date = _status_date(snapshot)
        if observed:
            snapshot.inspections, snapshot.pending_inspections = self.inspections(snapshot)
            snapshot.workflow = self.workflow(snapshot, kind)
        return snapshot

    def inspections(self, p: PermitSnapshot) -> tuple[list[Inspection], list[PendingInspection]]:
        rng = self.rng
        done: list[Inspection] = []
        pending: list[PendingInspection] = []
        if p.issued_date is None or p.status is N.ISSUED:
            if p.status is N.ISSUED and rng.random() < 0.5:
                when = p.issued_date + timedelta(days=14) if p.issued_date else None
                pending.append(PendingInspection(rng.choice(INSPECTION_TYPES), when))
            return done, pending
        end = p.finaled_date or min(self.today - timedelta(days=1), p.expires_date or self.today)
        count = {N.INSPECTIONS: rng.randint(1, 6), N.FINALED: rng.randint(1, 6)}.get(
            p.status, rng.randint(0, 3)
        )
        days = sorted(_between(rng, p.issued_date + timedelta(days=1), end) for _ in range(count))
        for day in days:
            done.append(Inspection(rng.choice(INSPECTION_TYPES), day, rng.choice(RESULTS),
                                   rng.choice(INSPECTORS)))  # fmt: skip
        if p.status is N.FINALED and p.finaled_date:
            done.append(Inspection("Final", p.finaled_date, "Passed", rng.choice(INSPECTORS)))
        if p.status is N.INSPECTIONS and rng.random() < 0.6:
            when = self.today + timedelta(days=rng.randint(1, 10))
            pending.append(PendingInspection(rng.choice(INSPECTION_TYPES), when))
        return done, pending

    def workflow(self, p: PermitSnapshot, kind: str) -> list[WorkflowTask]:
        rng = self.rng
        if kind == "CREC":
            names = ["Application Intake", "Zoning Review", "Building Plan Review", "Plan Approval"]
        elif kind == "UNC-EXPR":
            names = ["Application Intake", "Permit Issuance", "Inspections", "Final Inspection"]
        else:
            review = "Grading Plan Review" if kind == "UNC-GRAD" else "Building Plan Review"
            names = ["Application Intake", "Zoning Review", review, "Permit Issuance",
                     "Inspections", "Final Inspection"]  # fmt: skip
        issue_step = names.index("Permit Issuance") if "Permit Issuance" in names else len(names)
        reached = {
            N.APPLICATION_RECEIVED: 0, N.IN_REVIEW: min(2, issue_step - 1),
            N.APPLICANT_ACTION: min(2, issue_step - 1), N.ON_HOLD: 1,
            N.APPROVED_PENDING_ISSUE: issue_step if kind != "CREC" else len(names) - 1,
            N.ISSUED: issue_step + 1, N.INSPECTIONS: issue_step + 1, N.EXPIRED: issue_step + 1,
            N.FINALED: len(names), N.CANCELLED: rng.randint(0, 2),
        }.get(p.status, 0)  # fmt: skip
        reached = min(reached, len(names))
        applied = p.applied_date or self.today
        end = p.finaled_date or p.issued_date or self.today
        days = sorted(_between(rng, applied, max(applied, end)) for _ in range(reached))
        tasks = [WorkflowTask(name, rng.choice(("Passed", "Passed", "Pass")), day)
                 for name, day in zip(names[:reached], days, strict=True)]  # fmt: skip
        if reached < len(names) and p.status is not N.CANCELLED:
            current = {
                N.APPLICANT_ACTION: "Not Passed",
                N.INSPECTIONS: "Started",
                N.ON_HOLD: "Started",
            }.get(p.status) or rng.choice(("Started", "Started", "Partial Pass", "Scheduled"))
            if current == "Scheduled":
                when = self.today + timedelta(days=rng.randint(1, 20))
                current = f"Scheduled for {when:%m/%d/%Y}"
            done_at = (
                self.today - timedelta(days=1)
                if current in ("Not Passed", "Partial Pass")
                else None
            )
            tasks.append(WorkflowTask(names[reached], current, done_at))
        return tasks


def _status_date(p: PermitSnapshot) -> date | None:
    if p.status is N.FINALED:
        return p.finaled_date
    if p.status in (N.ISSUED, N.INSPECTIONS):
        return p.issued_date
    if p.status is N.EXPIRED:
        return p.expires_date
    if p.status is N.APPLICATION_RECEIVED:
        return p.applied_date
    return None


def generate(
    jurisdiction: Jurisdiction, rng: random.Random, count: int, today: date
) -> list[PermitSnapshot]:
    generator = _Generator(jurisdiction, rng, today)
    return [generator.permit(index) for index in range(count)]
