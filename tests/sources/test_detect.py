"""Number normalisation, detection and the canonical id (the resource branch's minimal
`sources/detect.py`)."""

from __future__ import annotations

import uuid

import pytest

from permitapi.sources import detect
from permitapi.sources.registry import default_directory

DIRECTORY = default_directory()


@pytest.mark.parametrize(
    ("slug", "raw", "normalized"),
    [
        ("ladbs", "21030-20000-00256", "21030-20000-00256"),
        ("ladbs", "21030 20000 00256", "21030-20000-00256"),
        ("ladbs", "210302000000256", "21030-20000-00256"),
        ("ladbs", "\u00a021030\u201320000\u201300256 ", "21030-20000-00256"),
        ("epicla", "creb2025000372", "CREB2025000372"),
        ("epicla", "unc-bldr250827010774", "UNC-BLDR250827010774"),
        ("aca:sandiego", "prj-1100001", "PRJ-1100001"),
        ("aca:sandiego", "prj 1100001", "PRJ-1100001"),
        # several dashings would match: the bare form is kept rather than guessed
        ("aca:sandiego", "prj1100001", "PRJ1100001"),
    ],
)
def test_normalize_number(slug: str, raw: str, normalized: str) -> None:
    jurisdiction = DIRECTORY.get(slug)
    assert jurisdiction is not None
    assert detect.normalize_number(jurisdiction, raw) == normalized


def test_permit_id_is_uuid5_of_slug_and_number() -> None:
    value = detect.permit_id("ladbs", "21030-20000-00256")
    assert uuid.UUID(value).version == 5
    assert value == detect.permit_id("ladbs", "21030-20000-00256")
    assert value != detect.permit_id("epicla", "21030-20000-00256")


def test_distinctive_formats_have_one_strong_candidate() -> None:
    for raw, slug in (("210302000000256", "ladbs"), ("CREB2025000372", "epicla")):
        candidates = detect.detect(DIRECTORY, raw)
        assert [(c.slug, c.confidence) for c in candidates] == [(slug, "strong")]


def test_shared_formats_keep_every_candidate_and_near_orders_them() -> None:
    candidates = detect.detect(DIRECTORY, "BLD2024-001234")
    assert len(candidates) > 10
    assert {c.confidence for c in candidates} == {"weak"}
    sandiego = DIRECTORY.get("aca:sandiego")
    assert sandiego is not None
    near = detect.detect(DIRECTORY, "BLD2024-001234", near=sandiego.center)
    assert near[0].slug == "aca:sandiego"
    assert {c.slug for c in near} == {c.slug for c in candidates}


def test_nothing_detected() -> None:
    assert detect.detect(DIRECTORY, "ZZZ") == []
