"""Permit number normalisation, canonical ids and jurisdiction detection (real-format numbers)."""

from __future__ import annotations

import uuid

import pytest

from permitapi.sources.detect import (
    PERMIT_NAMESPACE,
    Confidence,
    detect,
    normalize_number,
    parse_near,
    permit_id,
)
from permitapi.sources.registry import default_directory

DIRECTORY = default_directory()
SAN_DIEGO = (32.7157, -117.1611)
SACRAMENTO = (38.5816, -121.4944)


@pytest.mark.parametrize(
    ("family", "raw", "canonical"),
    [
        ("ladbs", "21030-20000-00256", "21030-20000-00256"),
        ("ladbs", "14044 10000 02293", "14044-10000-02293"),
        ("ladbs", "140441000002293", "14044-10000-02293"),
        ("ladbs", " 10-10000-975 ", "00010-10000-00975"),
        ("ladbs", "16041 10000-23545", "16041-10000-23545"),
        ("epicla", "unc-bldr250826010738", "UNC-BLDR250826010738"),
        ("epicla", "UNCBLDR250826010738", "UNC-BLDR250826010738"),
        ("epicla", "UNC BLDR 250826010738", "UNC-BLDR250826010738"),
        ("epicla", "creb2025000372", "CREB2025000372"),
        ("aca", "bld24 12345", "BLD24-12345"),
        ("aca", "struc_roof--26 001317", "STRUC-ROOF-26-001317"),
        ("aca", " com-2616861 ", "COM-2616861"),
        ("aca", "B200002515", "B200002515"),
    ],
)
def test_normalize(family: str, raw: str, canonical: str) -> None:
    assert normalize_number(family, raw) == canonical


@pytest.mark.parametrize(
    ("raw", "top", "confidence", "count"),
    [
        # LADBS: three five-digit groups, distinctive (research 1.6, tests/fixtures/ladbs)
        ("21030-20000-00256", "ladbs", Confidence.STRONG, 1),
        ("14044 10000 02293", "ladbs", Confidence.STRONG, 1),
        ("00010-10000-00975", "ladbs", Confidence.STRONG, 1),
        ("26014-10000-00017", "ladbs", Confidence.STRONG, 1),
        # EPIC-LA: prefix + YYMMDD + sequence, or prefix + YYYY + sequence (research 2.4)
        ("UNC-BLDR250826010738", "epicla", Confidence.STRONG, 1),
        ("unc-bldr260326003120", "epicla", Confidence.STRONG, 1),
        ("CREB2025000372", "epicla", Confidence.STRONG, 1),
        # Accela agency-specific formats found once in the directory
        ("B200002515", "aca:ont", Confidence.STRONG, 1),
        ("BLD-CERT-22080023", "aca:ftl", Confidence.STRONG, 1),
        ("COM000806366", "aca:leeco", Confidence.STRONG, 1),
        # Shared Accela formats: several agencies (research 3.4)
        ("COM-2616861", None, Confidence.WEAK, 2),
        ("RES-2600002", None, Confidence.WEAK, 2),
        ("BLD24-12345", None, Confidence.WEAK, None),
        ("ENFR26-0938", None, Confidence.WEAK, None),
        ("STRUC-ROOF-26-001317", None, Confidence.WEAK, None),
        ("PLU2026-00480", None, Confidence.WEAK, None),
    ],
)
def test_detection_table(
    raw: str, top: str | None, confidence: Confidence, count: int | None
) -> None:
    candidates = detect(DIRECTORY, raw)
    assert candidates, raw
    assert candidates[0].confidence is confidence
    assert all(c.reason for c in candidates)
    if top is not None:
        assert candidates[0].slug == top
    if count is not None:
        assert len(candidates) == count
    if confidence is Confidence.WEAK:
        assert len(candidates) > 1
        assert {c.confidence for c in candidates} == {Confidence.WEAK}


def test_every_directory_example_detects_its_own_jurisdiction() -> None:
    for jurisdiction in DIRECTORY:
        for example in jurisdiction.example_numbers:
            slugs = [c.slug for c in detect(DIRECTORY, example)]
            assert jurisdiction.slug in slugs, (jurisdiction.slug, example)


def test_weak_candidates_ordered_by_distance_when_near_given() -> None:
    near_sd = [c.slug for c in detect(DIRECTORY, "COM-2616861", near=SAN_DIEGO)]
    near_sac = [c.slug for c in detect(DIRECTORY, "COM-2616861", near=SACRAMENTO)]
    assert near_sd == ["aca:sandiego", "aca:sacramento"]
    assert near_sac == ["aca:sacramento", "aca:sandiego"]


def test_near_orders_within_a_tier_and_never_drops() -> None:
    plain = detect(DIRECTORY, "BLD24-12345")
    near = detect(DIRECTORY, "BLD24-12345", near=SAN_DIEGO)
    assert {c.slug for c in plain} == {c.slug for c in near}
    assert near[0].slug == "aca:sandiego"


def test_specific_formats_rank_first_without_near() -> None:
    candidates = detect(DIRECTORY, "BLD26-00793")
    assert candidates[0].slug == "aca:inglewood"
    assert "specific" in candidates[0].reason


def test_none_only_when_nothing_matches() -> None:
    candidates = detect(DIRECTORY, "XYZ123")
    assert candidates
    assert {c.confidence for c in candidates} == {Confidence.NONE}
    assert all(c.slug.startswith("aca:") for c in candidates)
    assert detect(DIRECTORY, "!!!") == []
    assert detect(DIRECTORY, "") == []


def test_permit_id_is_stable_and_formatting_independent() -> None:
    ladbs = DIRECTORY.get("ladbs")
    assert ladbs is not None
    ids = {
        permit_id("ladbs", normalize_number(ladbs, raw))
        for raw in ("14044 10000 2293", "140441000002293", "14044-10000-02293")
    }
    assert len(ids) == 1
    assert ids == {uuid.uuid5(PERMIT_NAMESPACE, "ladbs:14044-10000-02293")}
    # Jurisdiction is part of the identity.
    assert permit_id("aca:sandiego", "COM-2616861") != permit_id("aca:sacramento", "COM-2616861")
    assert str(PERMIT_NAMESPACE) == "6f1c3a52-9d0e-5b7a-8c41-2e7f5d90b8a3"


@pytest.mark.parametrize(
    ("raw", "parsed"),
    [
        ("34.05,-118.24", (34.05, -118.24)),
        ("91,0", None),
        ("a,b", None),
        ("1", None),
        (None, None),
        ("nan,1", None),
    ],
)
def test_parse_near(raw: str | None, parsed: tuple[float, float] | None) -> None:
    assert parse_near(raw) == parsed
