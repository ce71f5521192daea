"""Permit numbers: one canonical form per jurisdiction, the canonical id, and detection.

Normalisation removes formatting variance only, per family:
- LADBS: three digit groups, each zero-padded to five: `14044 10000 2293`, `1404410000022 93`
  and `140441000002293` all become `14044-10000-02293`.
- EPIC-LA: upper case, no spaces; the dash after a type prefix is restored
  (`unc bldr250826010738` -> `UNC-BLDR250826010738`).
- Accela: upper case; runs of spaces, underscores, dots or dashes become one dash
  (`bld24 12345` -> `BLD24-12345`). Dashes are not invented where the caller wrote none.

Detection ranks every jurisdiction whose published number formats match:
- `strong`: the number's format is distinctive: exactly one jurisdiction accepts it (LADBS's three
  five-digit groups, EPIC-LA's prefix + date + sequence, an agency-specific Accela format).
- `weak`: several jurisdictions accept the same format (the shared Accela patterns).
- `none`: appears only when no jurisdiction's format matches at all; then the jurisdictions whose
  family could plausibly issue a number of that shape are listed, so callers can still offer
  hints. A caller must not answer a lookup from a `none` candidate without an explicit
  jurisdiction (no candidate strong or weak means "jurisdiction not supported").
Candidates are never dropped. Within a tier, `near=(lat, lon)` orders by distance from the
jurisdiction's centre; without it, more specific formats (shared by fewer jurisdictions) come
first, then directory order.
"""

from __future__ import annotations

import math
import re
import uuid
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from datetime import date
from enum import StrEnum

from permitapi.kit.plain_numbers import parse_plain_decimal
from permitapi.sources.registry import Directory, Jurisdiction

# Fixed forever: changing it changes every permit_id (design.md "Permit identity").
PERMIT_NAMESPACE = uuid.UUID("6f1c3a52-9d0e-5b7a-8c41-2e7f5d90b8a3")


class Confidence(StrEnum):
    STRONG = "strong"
    WEAK = "weak"
    NONE = "none"


_RANK = {Confidence.STRONG: 0, Confidence.WEAK: 1, Confidence.NONE: 2}


@dataclass(frozen=True, slots=True)
class Candidate:
    slug: str
    display_name: str
    confidence: Confidence
    reason: str
    normalized_number: str


# -- normalisation ---------------------------------------------------------------------------
_LADBS_GROUPS = re.compile(r"^(\d{1,5})[\s\-._/]+(\d{1,5})[\s\-._/]+(\d{1,5})$")
_LADBS_COMPACT = re.compile(r"^\d{15}$")
_EPIC_TYPED = re.compile(r"^([A-Z]{2,5})-?([A-Z]{4})(\d{12})$")
_SEPARATORS = re.compile(r"[\s\-_.]+")


def _normalize_ladbs(raw: str) -> str:
    text = raw.strip()
    compact = re.sub(r"\s+", "", text)
    if _LADBS_COMPACT.fullmatch(compact):
        return f"{compact[:5]}-{compact[5:10]}-{compact[10:]}"
    match = _LADBS_GROUPS.fullmatch(text)
    if match:
        return "-".join(group.zfill(5) for group in match.groups())
    return compact.upper()


def _normalize_epicla(raw: str) -> str:
    text = re.sub(r"\s+", "", raw).upper()
    match = _EPIC_TYPED.fullmatch(text)
    if match:
        prefix, kind, digits = match.groups()
        return f"{prefix}-{kind}{digits}"
    return text


def _normalize_accela(raw: str) -> str:
    return _SEPARATORS.sub("-", raw.strip().upper()).strip("-")


_NORMALIZERS: dict[str, Callable[[str], str]] = {
    "ladbs": _normalize_ladbs,
    "epicla": _normalize_epicla,
    "aca": _normalize_accela,
}


def normalize_number(jurisdiction: Jurisdiction | str, raw: str) -> str:
    """The canonical form of `raw` under the rules of a jurisdiction (or a family name)."""
    family = jurisdiction if isinstance(jurisdiction, str) else jurisdiction.platform
    family = family.split(":", 1)[0]
    return _NORMALIZERS.get(family, _normalize_accela)(raw)


def permit_id(jurisdiction_slug: str, normalized_number: str) -> uuid.UUID:
    """The canonical permit id: uuid5 over `<slug>:<normalized number>`."""
    return uuid.uuid5(PERMIT_NAMESPACE, f"{jurisdiction_slug.lower()}:{normalized_number}")


# -- detection -------------------------------------------------------------------------------
def _distance_km(a: tuple[float, float], b: tuple[float, float]) -> float:
    lat1, lon1, lat2, lon2 = map(math.radians, (*a, *b))
    h = (
        math.sin((lat2 - lat1) / 2) ** 2
        + math.cos(lat1) * math.cos(lat2) * math.sin((lon2 - lon1) / 2) ** 2
    )
    return 6371.0 * 2 * math.asin(math.sqrt(h))


def _embedded_date(jurisdiction: Jurisdiction, number: str) -> str | None:
    """A human note on the date an EPIC-LA or LADBS number carries, when it carries one."""
    if jurisdiction.platform == "epicla":
        typed = re.fullmatch(r"[A-Z]{2,5}-[A-Z]{4}(\d{2})(\d{2})(\d{2})\d{6}", number)
        if typed:
            yy, mm, dd = (int(part) for part in typed.groups())
            try:
                return f"applied {date(2000 + yy, mm, dd).isoformat()}"
            except ValueError:
                return None
        yearly = re.fullmatch(r"[A-Z]{3,5}(\d{4})\d{6}", number)
        if yearly:
            return f"year {yearly.group(1)}"
    if jurisdiction.platform == "ladbs" and number[:2].isdigit():
        opened = int(number[:2])
        return f"opened {1900 + opened if opened >= 96 else 2000 + opened}"
    return None


def _plausible_family(family: str, raw: str) -> bool:
    """Loose shapes used only for `none` candidates, when no published format matches."""
    compact = re.sub(r"[\s\-_.]", "", raw).upper()
    if not compact.isalnum() or not 4 <= len(compact) <= 30:
        return False
    has_digit = any(c.isdigit() for c in compact)
    has_alpha = any(c.isalpha() for c in compact)
    if family == "ladbs":
        return compact.isdigit() and 10 <= len(compact) <= 15
    if family == "epicla":
        return has_alpha and has_digit and compact[:3].isalpha() and len(compact) >= 12
    return has_alpha and has_digit


def _sharing(directory: Directory) -> Counter[str]:
    """How many jurisdictions publish each pattern (fewer = more distinctive)."""
    counts: Counter[str] = Counter()
    for item in directory:
        for pattern in {p.pattern for p in item.permit_patterns}:
            counts[pattern] += 1
    return counts


def detect(
    directory: Directory, raw: str, near: tuple[float, float] | None = None
) -> list[Candidate]:
    """Every candidate jurisdiction for a permit number, strongest first (see module doc)."""
    matches: list[tuple[Jurisdiction, str, int]] = []  # (jurisdiction, normalised, sharing)
    sharing = _sharing(directory)
    for item in directory:
        number = normalize_number(item, raw)
        matched = [p.pattern for p in item.permit_patterns if p.fullmatch(number)]
        if matched:
            matches.append((item, number, min(sharing[p] for p in matched)))

    candidates: list[tuple[Candidate, int, int]] = []  # (candidate, specificity, file order)
    order = {item.slug: index for index, item in enumerate(directory)}
    if matches:
        confidence = Confidence.STRONG if len(matches) == 1 else Confidence.WEAK
        for item, number, shared in matches:
            note = _embedded_date(item, number)
            if confidence is Confidence.STRONG:
                reason = f"format of {item.display_name} numbers, used by no other jurisdiction"
            elif shared == 1:
                reason = (
                    f"matches a number format specific to {item.display_name}, but "
                    f"{len(matches) - 1} other jurisdictions accept the same number"
                )
            else:
                others = len(matches) - 1
                reason = (
                    f"matches a {item.display_name} number format that {others} other "
                    f"jurisdiction{'s' if others != 1 else ''} also use"
                )
            if note:
                reason += f" ({note})"
            candidates.append(
                (Candidate(item.slug, item.display_name, confidence, reason, number), shared, 0)
            )
    else:
        for item in directory:
            if _plausible_family(item.platform, raw):
                number = normalize_number(item, raw)
                reason = (
                    f"matches no published {item.display_name} number format; "
                    "listed only because its portal issues numbers of a similar shape"
                )
                candidates.append(
                    (Candidate(item.slug, item.display_name, Confidence.NONE, reason, number), 0, 0)
                )

    def sort_key(entry: tuple[Candidate, int, int]) -> tuple[float, ...]:
        candidate, shared, _ = entry
        jurisdiction = directory.get(candidate.slug)
        assert jurisdiction is not None
        distance = _distance_km(near, jurisdiction.center) if near is not None else 0.0
        return (_RANK[candidate.confidence], distance, shared, order[candidate.slug])

    return [entry[0] for entry in sorted(candidates, key=sort_key)]


def parse_near(value: str | None) -> tuple[float, float] | None:
    """`"<lat>,<lon>"` -> a point; anything malformed (an exponent, `1_0`, `inf`) or out of
    range -> None (ignored)."""
    if not value:
        return None
    parts = value.split(",")
    if len(parts) != 2:
        return None
    lat, lon = parse_plain_decimal(parts[0]), parse_plain_decimal(parts[1])
    if lat is None or lon is None or abs(lat) > 90 or abs(lon) > 180:
        return None
    return (lat, lon)
