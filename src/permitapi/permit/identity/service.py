"""Which permit a (number, jurisdiction?) pair names: the rules shared by status lookups, batch
items, the sandbox, resolutions and the inspections, conditions and history endpoints.

A number with an explicit jurisdiction is normalised with that jurisdiction's rules. Without one,
a format distinctive to one jurisdiction resolves there, else a number looked up before in
exactly one jurisdiction resolves there (status rule 7), and anything else is ambiguous (300
with ranked candidates, each carrying the permit_id it would produce) or unsupported (404):
`match_jurisdiction`, the one home of that rule.
"""

from __future__ import annotations

import difflib
import functools
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal
from urllib.parse import quote

from sqlalchemy.ext.asyncio import AsyncSession

from permitapi.errors import BadRequest, MultipleChoices, NotFound, invalid_parameter
from permitapi.kit.plain_numbers import ascii_form
from permitapi.permit import repository
from permitapi.permit.models import PermitRecord
from permitapi.sources import detect
from permitapi.sources.registry import Directory, Jurisdiction

API_PREFIX = "/api/v1"
How = Literal["explicit", "detected", "previously_looked_up"]
MAX_NUMBER_LENGTH = 64
LOOKED_UP_BEFORE = "this number was looked up here before"


@dataclass(frozen=True, slots=True)
class Identity:
    jurisdiction: Jurisdiction
    permit_number: str  # normalised
    permit_id: str
    how: How


def permit_path(permit_number: str, tail: str, jurisdiction: str | None = None) -> str:
    """`/api/v1/permits/<number>/<tail>`, with `?jurisdiction=` when given."""
    path = f"{API_PREFIX}/permits/{quote(permit_number, safe='')}/{tail}"
    return f"{path}?jurisdiction={quote(jurisdiction, safe=':')}" if jurisdiction else path


def resource_path(permit_id: str) -> str:
    return f"{API_PREFIX}/permits/{permit_id}"


def check_number(raw: str, *, location: str = "path") -> str:
    number = raw.strip()
    if not number or len(number) > MAX_NUMBER_LENGTH or not number.isprintable():
        raise invalid_parameter(
            "permit_number",
            f"must be 1 to {MAX_NUMBER_LENGTH} printable characters",
            code="invalid_permit_number",
            location=location,
        )
    if not number.isascii():
        # Refused, not normalised: every portal numbers its permits in ASCII, and a full-width
        # or Arabic-Indic digit must never reach a portal (or a cache key) as itself.
        plain = ascii_form(number)
        hint = f" ('{plain}'?)" if plain.isascii() else ""
        raise invalid_parameter(
            "permit_number",
            f"must be written with ASCII letters and digits{hint}",
            code="invalid_permit_number",
            location=location,
        )
    return number


def closest_slugs(directory: Directory, slug: str, limit: int = 3) -> list[str]:
    """The slugs an unknown one most likely meant, closest first: matched against each slug,
    its part after the platform prefix (`sandiego` for `aca:sandiego`) and its display name."""
    keys: dict[str, str] = {}
    for item in directory:
        for key in (item.slug, item.slug.partition(":")[2], item.display_name):
            folded = "".join(key.lower().split())
            if folded:
                keys.setdefault(folded, item.slug)
    wanted = "".join(slug.lower().split())
    found: list[str] = []
    for key in difflib.get_close_matches(wanted, list(keys), n=limit * 3, cutoff=0.6):
        if keys[key] not in found:
            found.append(keys[key])
    return found[:limit]


def explicit_jurisdiction(directory: Directory, slug: str) -> Jurisdiction:
    jurisdiction = directory.get(slug)
    if jurisdiction is None:
        suggested = closest_slugs(directory, slug)
        guess = f" Did you mean {', '.join(repr(s) for s in suggested)}?" if suggested else ""
        raise BadRequest(
            f"Unknown jurisdiction '{slug}'.{guess} GET /api/v1/jurisdictions lists the slugs.",
            code="invalid_jurisdiction",
            extra={"parameter": "jurisdiction", "did_you_mean": suggested},
        )
    return jurisdiction


def number_format_mismatch(jurisdiction: Jurisdiction, number: str) -> BadRequest:
    return BadRequest(
        f"'{number}' does not match any permit number format of {jurisdiction.display_name}.",
        code="invalid_permit_number",
        extra={
            "parameter": "permit_number",
            "jurisdiction": jurisdiction.slug,
            "example_numbers": list(jurisdiction.example_numbers),
        },
    )


def identity_of(jurisdiction: Jurisdiction, normalized: str, how: How) -> Identity:
    return Identity(
        jurisdiction, normalized, str(detect.permit_id(jurisdiction.slug, normalized)), how
    )


def candidate(found: detect.Candidate) -> dict[str, str]:
    """One jurisdiction an ambiguous (or unsupported) number could belong to, in the same shape
    in every 300 and 404 body (status lookups, resolutions, detail endpoints): the canonical
    permit_id that choice produces included."""
    return {
        "slug": found.slug,
        "display_name": found.display_name,
        "confidence": str(found.confidence),
        "reason": found.reason,
        "permit_number": found.normalized_number,
        "permit_id": str(detect.permit_id(found.slug, found.normalized_number)),
    }


def multiple_jurisdictions(
    raw: str, candidates: Sequence[detect.Candidate], *, example_tail: str | None
) -> MultipleChoices:
    """300: every candidate, in the given (ranked) order; `example` repeats the request path
    (`/permits/<number>/<example_tail>`) with the first candidate's jurisdiction."""
    extra: dict[str, object] = {
        "permit_number": raw,
        "candidates": [candidate(c) for c in candidates],
    }
    if example_tail is not None:
        extra["example"] = permit_path(raw, example_tail, candidates[0].slug)
    return MultipleChoices(
        f"Permit number '{raw}' matches {len(candidates)} jurisdictions; repeat the request "
        "with one of them as the jurisdiction parameter.",
        extra=extra,
    )


def not_supported(raw: str, hints: Sequence[detect.Candidate] = ()) -> NotFound:
    """404: no jurisdiction's published format fits. `hints` are confidence-`none` candidates
    (portals issuing numbers of a similar shape), listed but never chosen."""
    extra = {"candidates": [candidate(c) for c in hints]} if hints else {}
    return NotFound(
        f"No supported jurisdiction uses a permit number like '{raw}'. "
        "Pass the jurisdiction parameter if you know it.",
        code="jurisdiction_not_supported",
        extra=extra,
    )


# -- the jurisdiction of a number given without one ---------------------------------------------
# One rule for status lookups, batch items, the sandbox, resolutions and the stored reads:
# 1. detection, which needs no database (a fresh cache hit must not wait for one): the one
#    strong candidate, or the only candidate whose format fits at all (confidence `none` is a
#    hint, never chosen);
# 2. otherwise (status rule 7) the one jurisdiction where this number, normalised by each
#    jurisdiction's rules, has a stored representation;
# 3. otherwise 300 with the stored jurisdictions first, then every detected candidate, or 404
#    when no candidate's format fits.


@dataclass(frozen=True, slots=True)
class Match:
    """Where a number without an explicit jurisdiction belongs, and why."""

    jurisdiction: Jurisdiction
    number: str  # normalised by that jurisdiction's rules
    how: How


def choose(candidates: Sequence[detect.Candidate]) -> detect.Candidate | None:
    """Auto-detect: the one strong candidate, or the only candidate there is. Candidates of
    confidence `none` (no published format fits) are hints, never chosen."""
    strong = [c for c in candidates if c.confidence == "strong"]
    if len(strong) == 1:
        return strong[0]
    usable = [c for c in candidates if c.confidence != "none"]
    if len(usable) == 1:
        return usable[0]
    return None


@functools.lru_cache(maxsize=4096)
def _detect_cached(
    directory: Directory, raw: str, near: tuple[float, float] | None
) -> list[detect.Candidate]:
    """Detection is pure and the directory immutable; repeat lookups skip the regex sweep. The
    list is shared by every caller: never mutate it."""
    return detect.detect(directory, raw, near)


def detected(
    directory: Directory, raw: str, near: tuple[float, float] | None = None
) -> tuple[Match | None, Sequence[detect.Candidate]]:
    """Step 1 alone: the detected match, or None and the (shared, ranked) candidates."""
    candidates = _detect_cached(directory, raw, near)
    chosen = choose(candidates)
    jurisdiction = directory.get(chosen.slug) if chosen is not None else None
    if chosen is None or jurisdiction is None:
        return None, candidates
    return Match(jurisdiction, chosen.normalized_number, "detected"), candidates


async def match_jurisdiction(
    session: AsyncSession, directory: Directory, raw: str, near: tuple[float, float] | None = None
) -> tuple[Match | None, list[detect.Candidate]]:
    """The whole rule: the match, or None and the candidates to offer (stored jurisdictions
    first, marked as looked up before, then the detected ones)."""
    match, found = detected(directory, raw, near)
    if match is not None:
        return match, list(found)
    return await held_match(session, directory, raw, found)


async def held_match(
    session: AsyncSession, directory: Directory, raw: str, found: Sequence[detect.Candidate]
) -> tuple[Match | None, list[detect.Candidate]]:
    """The rule's database step, for a number detection matched to no one jurisdiction
    (`found`: its detected candidates): the one jurisdiction holding it, or None and the
    candidates to offer."""
    forms = {j.slug: detect.normalize_number(j, raw) for j in directory}
    rank = {c.slug: i for i, c in enumerate(found)}
    held = sorted(
        (
            slug
            for slug, number in await repository.holding_number(
                session, sorted(set(forms.values()))
            )
            if forms.get(slug) == number
        ),
        key=lambda slug: (rank.get(slug, len(rank)), slug),
    )
    if len(held) == 1:
        jurisdiction = directory.get(held[0])
        if jurisdiction is not None:
            return Match(jurisdiction, forms[held[0]], "previously_looked_up"), list(found)
    looked_up = [
        detect.Candidate(
            j.slug, j.display_name, detect.Confidence.STRONG, LOOKED_UP_BEFORE, forms[j.slug]
        )
        for slug in held
        if (j := directory.get(slug)) is not None
    ]
    return None, looked_up + [c for c in found if c.slug not in held]


def unmatched(
    raw: str, candidates: Sequence[detect.Candidate], *, example_tail: str | None
) -> MultipleChoices | NotFound:
    """The error for a number no jurisdiction was matched to: 300 when some candidate's format
    fits, else 404 listing the hints."""
    if any(c.confidence != "none" for c in candidates):
        return multiple_jurisdictions(raw, candidates, example_tail=example_tail)
    return not_supported(raw, candidates)


async def resolve(
    session: AsyncSession,
    directory: Directory,
    raw_number: str,
    jurisdiction_slug: str | None,
    *,
    example_tail: str | None = None,
    number_location: str = "path",
) -> tuple[Identity, PermitRecord | None]:
    """The identity the caller means and its stored row with a representation, if any.

    Raises 400 invalid_jurisdiction / invalid_permit_number (naming `number_location`), 404
    jurisdiction_not_supported or 300 multiple_jurisdictions. Never fetches from a portal.
    """
    number = check_number(raw_number, location=number_location)
    if jurisdiction_slug is not None:
        jurisdiction = explicit_jurisdiction(directory, jurisdiction_slug)
        normalized = detect.normalize_number(jurisdiction, number)
        row = await repository.get_by_identity(session, jurisdiction.slug, normalized)
        row = row if row is not None and row.snapshot else None
        # A stored row means a status lookup accepted the number: serve it even if the
        # directory's (partly unverified) patterns do not know the format.
        if row is None and not jurisdiction.matches(normalized):
            raise number_format_mismatch(jurisdiction, number)
        return identity_of(jurisdiction, normalized, "explicit"), row

    match, candidates = await match_jurisdiction(session, directory, number)
    if match is None:
        raise unmatched(number, candidates, example_tail=example_tail)
    row = await repository.get_by_identity(session, match.jurisdiction.slug, match.number)
    return identity_of(match.jurisdiction, match.number, match.how), (
        row if row is not None and row.snapshot else None
    )


def not_looked_up(identity: Identity, tail: str) -> NotFound:
    """404 for a permit with no stored representation: a status lookup creates one."""
    status_url = permit_path(identity.permit_number, "status", identity.jurisdiction.slug)
    return NotFound(
        f"No stored representation of permit '{identity.permit_number}' in "
        f"{identity.jurisdiction.display_name}. Look its status up first ({status_url}), then "
        f"retry {tail}.",
        code="permit_not_found",
        extra={"status_url": status_url, "jurisdiction": identity.jurisdiction.slug},
    )
