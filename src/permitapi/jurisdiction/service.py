"""Jurisdiction rules: the directory listing and requests for jurisdictions not yet covered."""

from __future__ import annotations

import re
import unicodedata
from datetime import datetime
from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession

from permitapi.account.service import Principal
from permitapi.errors import Conflict, invalid_parameter
from permitapi.jurisdiction import repository
from permitapi.jurisdiction.repository import RequestAggregate
from permitapi.jurisdiction.stats import active_permits_counts
from permitapi.kit.us_states import US_STATE_CODES
from permitapi.sources.registry import Directory, Jurisdiction

MAX_NAME_LENGTH = 100
# A place name: letters of any script (accented ones included), spaces and . ' -
# ("Coeur d'Alene", "St. Louis", "Winston-Salem", "Cañon City"); no digits, no markup.
PLACE_NAME_PUNCTUATION = frozenset(" .'-")
# Request status moves forward only, driven by how many distinct API keys asked (anonymous
# requests are unverifiable, so they raise request_count but never the status).
STATUS_ORDER = ("open", "investigating", "pending")
INVESTIGATING_AT_KEYS = 3
PENDING_AT_KEYS = 10
ESTIMATED_TIMELINE = {
    "open": (
        f"Not scheduled yet: a jurisdiction is investigated once {INVESTIGATING_AT_KEYS} "
        "different API keys have requested it."
    ),
    "investigating": "Under investigation: a decision on support within 30 days.",
    "pending": "Accepted: support expected within 60-90 days.",
}

_SPACES = re.compile(r"\s+")
_PARENTHESES = re.compile(r"\([^)]*\)")
_PREFIXES = ("city and county of ", "city of ", "town of ", "village of ", "township of ")


async def directory_listing(session: AsyncSession, directory: Directory) -> dict[str, Any]:
    counts = await active_permits_counts(session)
    items = [
        {
            "slug": j.slug,
            "display_name": j.display_name,
            "platform": j.platform,
            "state": j.state,
            "active_permits_count": counts.get(j.slug, 0),
        }
        for j in directory
    ]
    return {"jurisdictions": items, "total": len(items)}


def tidy_name(name: str) -> str:
    """The name as shown: surrounding and repeated whitespace removed."""
    return _SPACES.sub(" ", name).strip()


def name_key(name: str) -> str:
    """The identity of a requested name: case, whitespace, periods and a leading "City of" (or
    Town, Village, Township) do not matter, and "County of X" is "X County"."""
    key = tidy_name(name.replace(".", " ")).casefold()
    for prefix in _PREFIXES:
        if key.startswith(prefix):
            key = key[len(prefix) :]
            break
    if key.startswith("county of "):
        key = key[len("county of ") :] + " county"
    return key


def _directory_keys(jurisdiction: Jurisdiction) -> set[str]:
    """Name keys a directory entry answers to: "City of Glendale (AZ)" → "glendale";
    "Reno / Washoe County (…)" → "reno" and "washoe county"; a trailing "unincorporated" or
    "metro" is dropped."""
    keys = set()
    for part in _PARENTHESES.sub(" ", jurisdiction.display_name).split("/"):
        key = name_key(part)
        for suffix in (" unincorporated", " metro"):
            key = key.removesuffix(suffix)
        if key:
            keys.add(key)
    return keys


def supported_jurisdiction(directory: Directory, key: str, state_code: str) -> Jurisdiction | None:
    for jurisdiction in directory.all():
        if jurisdiction.state == state_code and key in _directory_keys(jurisdiction):
            return jurisdiction
    return None


def is_place_name(name: str) -> bool:
    return any(char.isalpha() for char in name) and all(
        char.isalpha() or char in PLACE_NAME_PUNCTUATION for char in name
    )


def validate_request(jurisdiction_name: str, state: str) -> tuple[str, str]:
    """The tidy name (NFC: an accent typed as a combining mark is one letter) and upper-case
    state code, or a 400 naming the parameter."""
    name = tidy_name(unicodedata.normalize("NFC", jurisdiction_name))
    if not name:
        raise invalid_parameter(
            "jurisdiction_name",
            "must not be empty",
            code="invalid_jurisdiction_name",
            location="body",
        )
    if len(name) > MAX_NAME_LENGTH:
        raise invalid_parameter(
            "jurisdiction_name",
            f"must be at most {MAX_NAME_LENGTH} characters",
            code="invalid_jurisdiction_name",
            location="body",
        )
    if not is_place_name(name):
        raise invalid_parameter(
            "jurisdiction_name",
            "must be a place name: letters (accented ones included), spaces and . ' -",
            code="invalid_jurisdiction_name",
            location="body",
        )
    code = state.strip().upper()
    if code not in US_STATE_CODES:
        raise invalid_parameter(
            "state",
            "must be a two-letter US state or territory code such as CA",
            code="invalid_state",
            location="body",
        )
    return name, code


def status_for(unique_keys: int, current: str) -> str:
    if unique_keys >= PENDING_AT_KEYS:
        computed = "pending"
    elif unique_keys >= INVESTIGATING_AT_KEYS:
        computed = "investigating"
    else:
        computed = "open"
    rank = STATUS_ORDER.index
    return computed if current not in STATUS_ORDER or rank(computed) > rank(current) else current


def _summary(aggregate: RequestAggregate) -> dict[str, Any]:
    return {
        "jurisdiction_name": aggregate.jurisdiction_name,
        "state_code": aggregate.state_code,
        "request_count": aggregate.request_count,
        "unique_keys_count": aggregate.unique_keys_count,
        "status": aggregate.status,
    }


async def requested_jurisdictions(session: AsyncSession, limit: int) -> dict[str, Any]:
    """The public list, most-wanted first."""
    return {"requests": [_summary(a) for a in await repository.list_requests(session, limit)]}


async def request_jurisdiction(
    session: AsyncSession,
    directory: Directory,
    principal: Principal | None,
    *,
    jurisdiction_name: str,
    state: str,
    now: datetime,
    address_hash: str | None = None,
) -> dict[str, Any]:
    """Count a request for a jurisdiction and return its current aggregate.

    An authenticated live key votes once per jurisdiction (a repeat changes nothing); an
    anonymous request (`address_hash` names its client address) votes once per address and
    raises only request_count; a sandbox key changes nothing. Raises 400
    invalid_jurisdiction_name / invalid_state, and 409 jurisdiction_already_supported for a
    jurisdiction the directory already covers."""
    name, state_code = validate_request(jurisdiction_name, state)
    key = name_key(name)
    supported = supported_jurisdiction(directory, key, state_code)
    if supported is not None:
        raise Conflict(
            f"{supported.display_name} is already supported as '{supported.slug}'.",
            code="jurisdiction_already_supported",
            extra={"slug": supported.slug},
        )
    if principal is not None and principal.is_sandbox:
        existing = await repository.find_request(session, name_key=key, state_code=state_code)
        aggregate = existing or RequestAggregate(0, name, state_code, 0, 0, "open")
        return {**_summary(aggregate), "estimated_timeline": ESTIMATED_TIMELINE[aggregate.status]}
    request_id = await repository.ensure_request(
        session, name_key=key, display_name=name, state_code=state_code, now=now
    )
    if principal is None:
        if address_hash is None:
            raise ValueError("an anonymous request needs its address_hash")
        counted = await repository.add_address_vote(
            session, request_id=request_id, address_hash=address_hash, now=now
        )
    else:
        counted = await repository.add_vote(
            session, request_id=request_id, api_key_id=principal.api_key_id, now=now
        )
    if counted:
        await repository.count_request(session, request_id, now)
    aggregate = await repository.get_request(session, request_id)
    status = status_for(aggregate.unique_keys_count, aggregate.status)
    if status != aggregate.status:
        await repository.set_status(session, request_id, status, now)
        aggregate = await repository.get_request(session, request_id)
    return {**_summary(aggregate), "estimated_timeline": ESTIMATED_TIMELINE[aggregate.status]}
