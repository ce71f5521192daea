"""ArcGIS parsing on every saved EPIC-LA sample (real records; values asserted as published)."""

from __future__ import annotations

from datetime import date

import pytest

from permitapi.sources.base import Blocked, NormalizedStatus, PortalChanged, RetryLater
from permitapi.sources.epicla import arcgis
from permitapi.sources.epicla.status import EPICLA_STATUS, normalize_case_status
from tests.sources.epicla import samples
from tests.support.samples import family_samples


def test_5829015008_plan_case_and_issued_permit() -> None:
    saved = samples.cases("5829015008")
    page = arcgis.parse_query_page(samples.query_response(*saved.values()))
    parsed = {c.case_number: c for c in (arcgis.parse_feature(f) for f in page.features)}

    plan = parsed["CREC2025001239"]
    assert plan.module == "PlanManagement"
    assert plan.status == "Open"
    assert plan.case_name == "County Disaster Recovery Permit"
    assert plan.workclass == "Rebuild"
    assert plan.applied == date(2025, 7, 10)
    assert plan.issued is None
    assert plan.valuation is None
    assert plan.address == "456 W Pentagon Street, Altadena CA 91001"  # leading space gone
    # PROJECTNAME is "" on the plan case: the full PROJECT_NAME is used.
    assert plan.project_name == "Non-like-for-like rebuild @ 456 W Pentagon St, Altadena"
    assert plan.case_id == "085733be-7aa5-4ff2-a19e-f201023d6a00"
    assert normalize_case_status(plan.status, plan.module, plan.last_inspection) == (
        NormalizedStatus.IN_REVIEW
    )

    permit = parsed["UNC-BLDR250827010774"]
    # The embedded YYMMDD equals APPLY_DATE read at UTC-8.
    assert permit.applied == date(2025, 8, 27)
    assert permit.issued == date(2026, 1, 9)
    assert permit.expires == date(2027, 1, 9)
    assert permit.last_inspection == date(2026, 4, 8)
    assert permit.completed is None
    assert permit.valuation == 365000.0
    assert permit.parcel == "5829015008"
    assert permit.case_name == "Unincorporated Building Residential"
    assert permit.workclass == "New"
    # PROJECTNAME is cut at 50 characters; PROJECT_NAME wins.
    assert saved["UNC-BLDR250827010774"]["PROJECTNAME"].endswith("St, Alt")
    assert permit.project_name == "Non-like-for-like rebuild @ 456 W Pentagon St, Altadena"
    assert permit.description == (
        "Eaton Non-Fire Like-for-Like Rebuild. Construction of a 1,680-square-foot single-family"
        " residence with covered 90 sf front porch and attached 539-square-foot\ngarage"
    )
    assert permit.latitude == pytest.approx(34.19845532744096)
    assert permit.longitude == pytest.approx(-118.15586724065241)
    assert normalize_case_status(permit.status, permit.module, permit.last_inspection) == (
        NormalizedStatus.INSPECTIONS
    )


def test_5841009012_approved_pending_clearances_numbered_description() -> None:
    (case,) = samples.cases("5841009012").values()
    parsed = arcgis.parse_case(case, case["_geometry"])
    assert parsed.case_number == "CREB2025000372"
    assert parsed.status == "Approved Pending Clearances"
    assert parsed.workclass == "Rebuild Project"
    assert parsed.issued is None
    assert parsed.applied == date(2025, 9, 15)
    assert parsed.valuation == 1015722.0
    assert parsed.parcel == "5841009012"
    assert parsed.address == "411 Punahou Street, Altadena CA 91001"
    lines = (parsed.description or "").split("\n")
    assert len(lines) == 4
    assert lines[0].startswith("1. EATON FIRE REBUILD - NEW 2-STORY 1107 SF SB9")
    assert lines[2] == "3. EATON FIRE REBUILD - NEW 2-STORY 1110 SF ADU"  # trailing space gone
    assert lines[3] == "4. EATON FIRE REBUILD - NEW 2-STORY 1110 SF ADU"
    assert normalize_case_status(parsed.status, parsed.module, None) == (
        NormalizedStatus.APPROVED_PENDING_ISSUE
    )


def test_5842022003_issued_permit_and_open_plan() -> None:
    saved = samples.cases("5842022003")
    permit = arcgis.parse_case(
        saved["UNC-BLDR250729009231"], saved["UNC-BLDR250729009231"]["_geometry"]
    )
    assert permit.applied == date(2025, 7, 29)
    assert permit.issued == date(2025, 8, 25)
    assert permit.expires == date(2026, 8, 25)
    assert permit.last_inspection == date(2026, 4, 13)
    assert permit.valuation == 445000.0
    assert permit.project_name == "Like-for-Like SFR Rebuild @ 3245 Arrowhead Ct"
    assert permit.latitude == pytest.approx(34.2020382016874)

    plan = arcgis.parse_case(saved["CREC2025000782"])
    assert plan.status == "Open"
    assert plan.applied == date(2025, 6, 3)
    assert plan.description == "(EATON FIRE LIKE FOR LIKE) New single family home, 2,135 SF. drpdrt"
    assert plan.latitude is None  # no geometry given


def test_5842024014_finaled_with_expire_date_still_populated() -> None:
    saved = samples.cases("5842024014")
    permit = arcgis.parse_case(saved["UNC-BLDR250228002138"])
    assert permit.status == "Finaled"
    assert permit.applied == date(2025, 2, 28)
    assert permit.issued == date(2025, 6, 3)
    assert permit.completed == date(2026, 3, 11)
    assert permit.completed == permit.last_inspection
    assert permit.expires == date(2026, 6, 3)  # published, though the permit finaled
    assert normalize_case_status(permit.status, permit.module, permit.last_inspection) == (
        NormalizedStatus.FINALED
    )
    plan = arcgis.parse_case(saved["CREC2025000052"])
    assert plan.description == (
        "EATON FIRE LIKE FOR LIKE REBUILD--- Rebuild the existing single family dwelling like"
        " for like EATON FIRE damage\n\ndrpdrt"
    )
    assert plan.project_name == "Like-for-Like SFR Rebuild @ 3458 Monterosa Dr"


def test_every_epicla_sample_is_handled() -> None:
    """A capture added to tests/fixtures/epicla must be covered here, not silently skipped."""
    known = {*samples.AIN_FILES.values(), samples.ERROR_ENVELOPE}
    assert set(family_samples("epicla")) == known
    for path in samples.AIN_FILES.values():
        saved = samples.load(path)["epic_cases"]
        page = arcgis.parse_query_page(samples.query_response(*saved))
        parsed = [arcgis.parse_feature(f) for f in page.features]
        assert [c.case_number for c in parsed] == [c["CASENUMBER"] for c in saved]
        for case in parsed:
            assert case.address is not None
            assert not case.address.startswith(" ")
            assert case.parcel == samples.load(path)["ain"]
            assert case.latitude is not None
            assert 34.0 < case.latitude < 34.3
            assert EPICLA_STATUS.normalize(case.status) is not NormalizedStatus.UNKNOWN


def test_error_envelope_sample_is_portal_changed() -> None:
    payload = samples.load(samples.ERROR_ENVELOPE)
    with pytest.raises(PortalChanged, match="Invalid field: NO_SUCH_FIELD"):
        arcgis.parse_query_page(payload)
    with pytest.raises(PortalChanged):
        arcgis.parse_count(payload)


@pytest.mark.parametrize(
    ("code", "error"),
    [(503, RetryLater), (500, RetryLater), (504, RetryLater), (499, Blocked), (498, Blocked)],
)
def test_error_envelope_codes(code: int, error: type[Exception]) -> None:
    with pytest.raises(error):
        arcgis.parse_query_page({"error": {"code": code, "message": "x", "details": []}})


def test_malformed_payloads() -> None:
    with pytest.raises(PortalChanged):
        arcgis.load_json(b"<html>oops</html>", "query")
    with pytest.raises(PortalChanged):
        arcgis.parse_query_page({"objectIdFieldName": "OBJECTID"})
    with pytest.raises(PortalChanged):
        arcgis.parse_case({"CASENUMBER": "X1", "APPLY_DATE": "2025-01-01"})


def test_layer_dates_are_read_at_fixed_utc_minus_8() -> None:
    # 2025-08-27 08:00 UTC is midnight at UTC-8 (01:00 PDT): still 27 August.
    assert arcgis.epoch_ms_to_date(1756281600000) == date(2025, 8, 27)
    # One millisecond earlier is 26 August at UTC-8.
    assert arcgis.epoch_ms_to_date(1756281600000 - 1) == date(2025, 8, 26)
    assert arcgis.epoch_ms_to_date(None) is None


def test_geometry_outside_wgs84_is_not_observed() -> None:
    assert arcgis.point({"x": 6520374.2, "y": 1894562.8}, 102645) == (None, None)
    assert arcgis.point({"x": 6520374.2, "y": 1894562.8}, None) == (None, None)
    assert arcgis.point({"x": -118.1, "y": 34.2}) == (34.2, -118.1)
