"""Permit number -> candidate jurisdictions, and the canonical permit id.

Minimal stand-in written on the `permits` branch so status lookups can be built and tested
before the core branch lands its detector; at merge the core engineer's module replaces this
one (same names and signatures).

Confidence: `strong` when the number fits a pattern distinctive to one jurisdiction (LADBS,
EPIC-LA), `weak` when it fits a pattern several Accela agencies share.
"""

from __future__ import annotations

import math
import uuid
from dataclasses import dataclass
from typing import Literal

from permitapi.sources.registry import Directory, Jurisdiction

Confidence = Literal["strong", "weak", "none"]
PERMIT_NAMESPACE = uuid.UUID("6f1c6a2e-3d0b-5e4c-9a51-2b7f0c8d9e10")
_RANK = {"strong": 0, "weak": 1, "none": 2}


@dataclass(frozen=True, slots=True)
class Candidate:
    slug: str
    display_name: str
    confidence: Confidence
    reason: str
    normalized_number: str


def normalize_number(jurisdiction: Jurisdiction, raw: str) -> str:
    """Upper case without surrounding or inner whitespace; dashes are significant."""
    return "".join(raw.split()).upper()


def permit_id(jurisdiction_slug: str, normalized_number: str) -> str:
    return str(uuid.uuid5(PERMIT_NAMESPACE, f"{jurisdiction_slug}:{normalized_number}"))


def _distance_km(a: tuple[float, float], b: tuple[float, float]) -> float:
    lat1, lon1, lat2, lon2 = map(math.radians, (*a, *b))
    h = (
        math.sin((lat2 - lat1) / 2) ** 2
        + math.cos(lat1) * math.cos(lat2) * math.sin((lon2 - lon1) / 2) ** 2
    )
    return 6371.0 * 2 * math.asin(math.sqrt(h))


def _shared_patterns(directory: Directory) -> set[str]:
    seen: dict[str, int] = {}
    for item in directory:
        for pattern in {p.pattern for p in item.permit_patterns}:
            seen[pattern] = seen.get(pattern, 0) + 1
    return {p for p, n in seen.items() if n > 1}


def detect(
    directory: Directory, raw: str, near: tuple[float, float] | None = None
) -> list[Candidate]:
    """Every jurisdiction whose patterns the number fits, strongest first; `near` orders the
    candidates of one confidence tier by distance from the jurisdiction's centre."""
    shared = _shared_patterns(directory)
    found: list[tuple[int, float, int, Candidate]] = []
    for index, item in enumerate(directory):
        number = normalize_number(item, raw)
        hits = [p for p in item.permit_patterns if p.fullmatch(number)]
        if not hits:
            continue
        distinctive = [p for p in hits if p.pattern not in shared and item.platform != "aca"]
        confidence: Confidence = "strong" if distinctive else "weak"
        reason = (
            f"matches the {item.display_name} number format"
            if distinctive
            else "matches a number format several jurisdictions share"
        )
        distance = _distance_km(near, item.center) if near else 0.0
        found.append(
            (
                _RANK[confidence],
                distance,
                index,
                Candidate(item.slug, item.display_name, confidence, reason, number),
            )
        )
    found.sort(key=lambda entry: entry[:3])
    return [entry[3] for entry in found]
