"""The simulated EPIC-LA data set and its ArcGIS where-clause subset."""

from __future__ import annotations

import math
import random
import re
from datetime import UTC, datetime

import pytest

from permitapi.portalsim.epicla import EpicLaFamily, wire
from permitapi.portalsim.epicla.where import WhereError, compile_where
from permitapi.sources.base import NormalizedStatus as N
from tests.sources.epicla.sim import TODAY, build

FIELDS = ["STATUS", "APPLY_DATE", "MAIN_AIN", "PERMIT_VALUATION", "CASENAME"]
ROW = {
    "STATUS": "Issued",
    "APPLY_DATE": 1756281600000,  # 2025-08-27 08:00 UTC
    "MAIN_AIN": "5829015008",
    "PERMIT_VALUATION": 365000,
    "CASENAME": None,
}


@pytest.mark.parametrize(
    ("clause", "expected"),
    [
        ("1=1", True),
        ("status = 'issued'", True),
        ("STATUS <> 'Issued'", False),
        ("STATUS IN ('Finaled','Issued')", True),
        ("STATUS NOT IN ('Finaled','Issued')", False),
        ("MAIN_AIN LIKE '5829%'", True),
        ("MAIN_AIN LIKE '_829015008'", True),
        ("CASENAME IS NULL AND PERMIT_VALUATION >= 365000", True),
        ("CASENAME IS NOT NULL", False),
        ("CASENAME = 'x' OR (STATUS = 'Issued' AND PERMIT_VALUATION < 400000.5)", True),
        ("NOT CASENAME = 'x'", False),  # unknown stays unknown
        ("APPLY_DATE >= DATE '2025-08-27' AND APPLY_DATE < DATE '2025-08-28'", True),
        ("APPLY_DATE <= DATE '2025-08-27'", False),  # the literal is 00:00 UTC
        ("APPLY_DATE BETWEEN TIMESTAMP '2025-08-27 07:59:59' AND DATE '2025-08-28'", True),
        ("STATUS = 'O''Brien'", False),
    ],
)
def test_where_subset(clause: str, expected: bool) -> None:
    assert compile_where(clause, FIELDS)(ROW) is expected


@pytest.mark.parametrize(
    "clause", ["NOPE = 1", "STATUS = = 'x'", "(STATUS = 'x'", "STATUS LIKE 5", "DATE 'x' = 1"]
)
def test_invalid_where(clause: str) -> None:
    with pytest.raises(WhereError):
        compile_where(clause, FIELDS)(ROW)


def test_generation_is_deterministic_and_realistic() -> None:
    sim = build(count=400, seed=5)
    again = build(count=400, seed=5)
    assert [p.permit_number for p in sim.store.of("epicla")] == [
        p.permit_number for p in again.store.of("epicla")
    ]
    permits = sim.store.of("epicla")
    assert len(permits) == 400
    center_lat, center_lon = sim.jurisdiction.center
    for p in permits:
        unc = re.fullmatch(r"UNC-(BLDR|BLDC|EXPR|GRAD)(\d{6})\d{6}", p.permit_number)
        cre = re.fullmatch(r"CRE[BC](\d{4})\d{6}", p.permit_number)
        assert unc or cre, p.permit_number
        assert p.applied_date is not None
        if unc:
            assert unc[2] == p.applied_date.strftime("%y%m%d")
        elif cre:
            assert cre[1] == str(p.applied_date.year)
        assert sim.jurisdiction.matches(p.permit_number)
        assert p.parcel is not None
        assert re.fullmatch(r"\d{10}", p.parcel)
        assert p.latitude is not None
        assert p.longitude is not None
        km = math.dist(
            (p.latitude * 111.0, p.longitude * 92.0), (center_lat * 111.0, center_lon * 92.0)
        )
        assert km < sim.jurisdiction.radius_km
        if p.issued_date and p.applied_date <= TODAY:
            assert p.applied_date <= p.issued_date
        if p.status is N.FINALED:
            assert p.finaled_date is not None
            assert p.expires_date is None
    raw = {p.raw_status for p in permits}
    assert {"Open", "Approved Pending Clearances", "Finaled", "Issued", "Expired"} <= raw
    assert len(raw) >= 24


def test_wire_quirks() -> None:
    sim = build(count=300, seed=11)
    rendered = [wire.attributes(p) for p in sim.store.of("epicla")]
    assert all(a["MAIN_ADDRESS"].startswith(" ") for a in rendered)
    finaled = [a for a in rendered if a["STATUS"] == "Finaled" and a["ISSUANCE_DATE"]]
    assert finaled
    assert all(a["EXPIRE_DATE"] is not None for a in finaled)
    truncated = [a for a in rendered if a["PROJECTNAME"] and a["PROJECTNAME"] != a["PROJECT_NAME"]]
    assert truncated
    assert all(len(a["PROJECTNAME"]) == 50 for a in truncated)
    assert any(" \n" in (a["DESCRIPTION"] or "") for a in rendered)
    for a in rendered:
        for name in ("APPLY_DATE", "ISSUANCE_DATE", "EXPIRE_DATE", "COMPLETE_DATE"):
            if a[name] is not None:
                assert datetime.fromtimestamp(a[name] / 1000, UTC).hour == 8
    plan = [a for a in rendered if a["CASENUMBER"].startswith("CREC")]
    assert plan
    assert all(a["MODULENAME"] == "PlanManagement" and a["PROJECTNAME"] == "" for a in plan)


def test_family_protocol_attributes() -> None:
    family = EpicLaFamily()
    assert family.family == "epicla"
    sim = build(count=5)
    assert family.generate(sim.jurisdiction, random.Random(1), 3, TODAY)[0].applied_date
