"""Permit number -> jurisdiction candidates, number normalisation and the canonical permit id.

Minimal implementation written on the `resource` branch so that resolutions and the detail
endpoints can run before the core branch lands its own `detect.py` (same API; that version
replaces this one at merge).

Normalisation removes formatting variance only: case, whitespace and dash variants. A number
typed without its dashes (or with them misplaced) gets them back only when exactly one dashing
of the bare characters matches the jurisdiction's patterns; otherwise the typed form is kept.
"""

from __future__ import annotations

import math
import re
import uuid
from dataclasses import dataclass
from functools import lru_cache
from itertools import combinations

from permitapi.sources.registry import Directory, Jurisdiction

# Fixed forever: changing it would change every permit_id ever handed out.
PERMIT_NAMESPACE = uuid.UUID("6f0f3c4e-5d0a-5b9e-9a57-7a1e4c2b8d10")

_DASHES = re.compile(r"[\u2010-\u2015\u2212\uFE58\uFE63\uFF0D]")
_SPACES = re.compile(r"\s+")


@dataclass(frozen=True, slots=True)
class Candidate:
    slug: str
    display_name: str
    confidence: str  # "strong" (only this jurisdiction matches) | "weak" (format is shared)
    reason: str
    normalized_number: str


def _typed_forms(raw: str) -> tuple[str, ...]:
    """The number as typed, without formatting variance: upper case, dash variants unified,
    whitespace either dropped or read as a separator ("21030 20000 00256")."""
    text = _DASHES.sub("-", raw.replace("\xa0", " ")).strip().upper()
    joined = re.sub(r"-{2,}", "-", _SPACES.sub("", text)).strip("-")
    spaced = re.sub(r"-{2,}", "-", _SPACES.sub("-", text)).strip("-")
    return (joined,) if spaced == joined else (joined, spaced)


def _typed_match(jurisdiction: Jurisdiction, raw: str) -> str | None:
    return next((form for form in _typed_forms(raw) if jurisdiction.matches(form)), None)


@lru_cache(maxsize=1024)
def _dash_optional(pattern: str) -> tuple[re.Pattern[str], int]:
    """The pattern with its literal dashes (outside character classes) made optional, and
    how many there are: a cheap pre-check before enumerating dashings."""
    out, count, in_class, escaped = [], 0, False, False
    for char in pattern:
        if escaped:
            escaped = False
        elif char == "\\":
            escaped = True
        elif char == "[":
            in_class = True
        elif char == "]":
            in_class = False
        elif char == "-" and not in_class:
            count += 1
            out.append("-?")
            continue
        out.append(char)
    return re.compile("".join(out)), count


def _redash(bare: str, jurisdiction: Jurisdiction) -> str | None:
    """The single dashing of `bare` that matches a pattern, or None when none or several do."""
    found: set[str] = set()
    for pattern in jurisdiction.permit_patterns:
        relaxed, most = _dash_optional(pattern.pattern)
        if not relaxed.fullmatch(bare):
            continue
        for dashes in range(most + 1):
            for positions in combinations(range(1, len(bare)), dashes):
                parts = [
                    bare[i:j] for i, j in zip((0, *positions), (*positions, len(bare)), strict=True)
                ]
                candidate = "-".join(parts)
                if pattern.fullmatch(candidate):
                    found.add(candidate)
                    if len(found) > 1:
                        return None
    return found.pop() if found else None


def normalize_number(jurisdiction: Jurisdiction, raw: str) -> str:
    """The jurisdiction's canonical form of `raw`: typed dashes are never moved or removed;
    a number typed without any gets them back when exactly one dashing matches."""
    typed = _typed_match(jurisdiction, raw)
    if typed is not None:
        return typed
    joined = _typed_forms(raw)[0]
    if "-" not in joined and "-" not in _DASHES.sub("-", raw):
        return _redash(joined, jurisdiction) or joined
    return joined


def permit_id(jurisdiction_slug: str, normalized_number: str) -> str:
    return str(uuid.uuid5(PERMIT_NAMESPACE, f"{jurisdiction_slug}:{normalized_number}"))


def _distance_km(a: tuple[float, float], b: tuple[float, float]) -> float:
    lat1, lon1, lat2, lon2 = map(math.radians, (*a, *b))
    h = (
        math.sin((lat2 - lat1) / 2) ** 2
        + math.cos(lat1) * math.cos(lat2) * math.sin((lon2 - lon1) / 2) ** 2
    )
    return 6371.0 * 2 * math.asin(math.sqrt(h))


def detect(
    directory: Directory, raw: str, near: tuple[float, float] | None = None
) -> list[Candidate]:
    """Every jurisdiction whose patterns match the number, strongest first.

    Within a tier, `near` orders by distance to each jurisdiction's centre; otherwise the
    directory order is kept. Nothing is dropped.
    """
    # Numbers matching as typed win: re-dashing a bare number must not turn a format that is
    # distinctive as typed (EPIC-LA's CREB2025000372) into a shared one.
    matches = [(j, form) for j in directory if (form := _typed_match(j, raw)) is not None]
    if not matches:
        for jurisdiction in directory:
            normalized = normalize_number(jurisdiction, raw)
            if jurisdiction.matches(normalized):
                matches.append((jurisdiction, normalized))
    strong = len(matches) == 1
    ranked = sorted(
        enumerate(matches),
        key=lambda item: (_distance_km(near, item[1][0].center) if near else 0.0, item[0]),
    )
    return [
        Candidate(
            slug=j.slug,
            display_name=j.display_name,
            confidence="strong" if strong else "weak",
            reason=(
                "the number format is specific to this jurisdiction"
                if strong
                else "the number format is shared by several jurisdictions"
            ),
            normalized_number=normalized,
        )
        for _, (j, normalized) in ranked
    ]
