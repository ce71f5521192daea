"""GET /permits/search query parameters: parsing, normalisation and every 400 they can cause.

The raw query string is parsed here (not by FastAPI) so that an unknown parameter, a repeated
single-valued one or an empty value each get their own stable code naming the parameter.

Codes: `unsupported_filter` (contractor, owner or any unknown parameter: a typo must not silently
broaden a billed search), `filter_required`, `invalid_<parameter>` for a malformed value,
`too_many_parcels`, `incomplete_radius`, `invalid_date_range`, `invalid_value_range`,
`conflicting_scope`.

Every value is NFKC-normalised first (full-width digits become ASCII); numbers are plain
decimals only (no `1_000`, `1e3`, `inf`), valuations at most MAX_VALUE, and dates inside
EARLIEST_DATE..LATEST_DATE (400 `invalid_date_range` outside): whatever passes here can be
written into every portal's query language.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, fields
from datetime import date
from typing import Any

from permitapi.account.plans import PARCELS_PER_SEARCH_MAX
from permitapi.errors import BadRequest, invalid_parameter
from permitapi.kit.plain_numbers import ascii_form, parse_plain_decimal
from permitapi.sources.base import SearchFilters

DISCOVERY_SOURCES = ("ladbs", "epicla")  # merge tiebreak order is alphabetical, see service
CITY_NAMES = {"los angeles": "ladbs"}
COUNTY_NAMES = {"los angeles county": "epicla"}
PERMIT_TYPES = ("Building", "Electrical", "Mechanical", "Plumbing")
DEFAULT_LIMIT = 25
MAX_LIMIT = 100
MAX_RADIUS_MI = 25.0
PARCEL_DIGITS = 10  # LA County Assessor numbers (APN/AIN), used by both sources
MAX_STATUS_LENGTH = 100
MAX_PARAMETER_OCCURRENCES = 100  # parcel repeats beyond this are abuse, not duplicates
# The dates a search may name (docs/decisions.md): wide enough for any permit record, narrow
# enough that a portal query's `date + 1 day` never leaves Python's date range.
EARLIEST_DATE = date(1900, 1, 1)
LATEST_DATE = date(2100, 12, 31)
MAX_VALUE = 1_000_000_000_000  # dollars; no permit is valued above a trillion

# Filters that would expose or select by people (never offered, spec: no owner/contractor).
PEOPLE_FILTERS = frozenset(
    {"contractor", "contractor_name", "license", "license_number", "owner", "owner_name",
     "applicant", "applicant_name", "engineer", "architect"}
)  # fmt: skip
SCOPE_PARAMETERS = ("city", "county", "jurisdiction")
FILTER_PARAMETERS = (
    "parcel", "zip", "lat", "lon", "radius_mi", "permit_type", "date_from", "date_to",
    "value_min", "value_max", "status",
)  # fmt: skip
CONTROL_PARAMETERS = ("cursor", "limit")
KNOWN_PARAMETERS = frozenset(SCOPE_PARAMETERS + FILTER_PARAMETERS + CONTROL_PARAMETERS)

_ZIP = re.compile(r"^([0-9]{5})(?:-[0-9]{4})?$")
_ISO_DATE = re.compile(r"^[0-9]{4}-[0-9]{2}-[0-9]{2}$")
_SPACES = re.compile(r"\s+")


@dataclass(frozen=True, slots=True)
class Filters(SearchFilters):
    """The normalised filters: what the sources are asked and what a cursor is bound to."""

    @property
    def has_radius(self) -> bool:
        return self.radius_mi is not None

    @property
    def broad(self) -> bool:
        """Nothing but date bounds, or nothing at all (a scope-only search): the broad
        first-page searches rule 5 retries on the county source."""
        return self == Filters(date_from=self.date_from, date_to=self.date_to)

    def canonical(self) -> str:
        """A stable text form: equal filters, however they were spelled, give equal text."""
        parts: list[str] = []
        for item in fields(self):
            name = item.name
            value: Any = getattr(self, name)
            if value is None or value == ():
                continue
            if isinstance(value, tuple):
                value = ",".join(value)
            elif isinstance(value, float):
                value = repr(value)
            parts.append(f"{name}={value}")
        return "&".join(parts)


@dataclass(frozen=True, slots=True)
class SearchQuery:
    sources: tuple[str, ...]  # selected discovery sources, in DISCOVERY_SOURCES order
    filters: Filters
    limit: int
    cursor: str | None
    # Whether city, county or jurisdiction was given: a scope alone is a filter ("every permit
    # of Los Angeles, newest first"), so only a query without scope needs another filter.
    scoped: bool = False


def _single(params: dict[str, list[str]], name: str) -> str | None:
    values = params.get(name)
    if not values:
        return None
    if len(values) > 1:
        raise invalid_parameter(name, "may be given only once", code=f"invalid_{name}")
    value = ascii_form(values[0]).strip()
    if not value:
        raise invalid_parameter(name, "must not be empty", code=f"invalid_{name}")
    return value


def _number(params: dict[str, list[str]], name: str) -> float | None:
    raw = _single(params, name)
    if raw is None:
        return None
    value = parse_plain_decimal(raw)
    if value is None:
        raise invalid_parameter(
            name,
            "must be a plain decimal number such as 1500 or 34.05 (no exponent, no underscores)",
            code=f"invalid_{name}",
        )
    return value


def _date(params: dict[str, list[str]], name: str) -> date | None:
    raw = _single(params, name)
    if raw is None:
        return None
    try:
        if not _ISO_DATE.fullmatch(raw):
            raise ValueError(raw)
        day = date.fromisoformat(raw)
    except ValueError:
        raise invalid_parameter(
            name, "must be an ISO date (YYYY-MM-DD)", code=f"invalid_{name}"
        ) from None
    if not EARLIEST_DATE <= day <= LATEST_DATE:
        raise invalid_parameter(
            name,
            f"must be between {EARLIEST_DATE.isoformat()} and {LATEST_DATE.isoformat()}",
            code="invalid_date_range",
        )
    return day


def _scope(params: dict[str, list[str]]) -> tuple[str, ...]:
    """Each of city, county and jurisdiction narrows the sources; together they must agree."""
    selected = set(DISCOVERY_SOURCES)
    city = _single(params, "city")
    if city is not None:
        source = CITY_NAMES.get(_SPACES.sub(" ", city).casefold())
        if source is None:
            raise invalid_parameter(
                "city", "the only city searchable is 'Los Angeles'", code="invalid_city"
            )
        selected &= {source}
    county = _single(params, "county")
    if county is not None:
        source = COUNTY_NAMES.get(_SPACES.sub(" ", county).casefold())
        if source is None:
            raise invalid_parameter(
                "county",
                "the only county searchable is 'Los Angeles County' (unincorporated areas)",
                code="invalid_county",
            )
        if not selected & {source}:
            raise _conflict("county")
        selected &= {source}
    jurisdiction = _single(params, "jurisdiction")
    if jurisdiction is not None:
        slug = jurisdiction.lower()
        if slug not in DISCOVERY_SOURCES:
            raise invalid_parameter(
                "jurisdiction",
                "discovery covers 'ladbs' and 'epicla' only",
                code="invalid_jurisdiction",
            )
        if slug not in selected:
            raise _conflict("jurisdiction")
        selected &= {slug}
    return tuple(s for s in DISCOVERY_SOURCES if s in selected)


def _conflict(name: str) -> BadRequest:
    return invalid_parameter(
        name,
        "selects a different source than the other scope parameters; the city of Los Angeles "
        "(ladbs) and unincorporated Los Angeles County (epicla) are separate sources",
        code="conflicting_scope",
    )


def _parcels(params: dict[str, list[str]]) -> tuple[str, ...]:
    raw_values = params.get("parcel", [])
    if len(raw_values) > MAX_PARAMETER_OCCURRENCES:
        raise invalid_parameter(
            "parcel", f"at most {PARCELS_PER_SEARCH_MAX} parcels", code="too_many_parcels"
        )
    parcels: list[str] = []
    for raw in raw_values:
        value = ascii_form(raw).replace(" ", "").replace("-", "").strip()
        if not value.isascii() or not value.isdigit() or len(value) != PARCEL_DIGITS:
            raise invalid_parameter(
                "parcel",
                f"{raw!r} is not a {PARCEL_DIGITS}-digit parcel number (APN/AIN); spaces and "
                "hyphens are allowed",
                code="invalid_parcel",
            )
        if value not in parcels:
            parcels.append(value)
    if len(parcels) > PARCELS_PER_SEARCH_MAX:
        raise invalid_parameter(
            "parcel",
            f"at most {PARCELS_PER_SEARCH_MAX} distinct parcels per search, got {len(parcels)}",
            code="too_many_parcels",
        )
    return tuple(sorted(parcels))


def _radius(params: dict[str, list[str]]) -> tuple[float | None, float | None, float | None]:
    lat, lon, radius = _number(params, "lat"), _number(params, "lon"), _number(params, "radius_mi")
    given = {"lat": lat, "lon": lon, "radius_mi": radius}
    missing = [name for name, value in given.items() if value is None]
    if len(missing) == 3:
        return None, None, None
    if missing:
        raise invalid_parameter(
            missing[0],
            "lat, lon and radius_mi must be given together; missing " + ", ".join(missing),
            code="incomplete_radius",
        )
    assert lat is not None
    assert lon is not None
    assert radius is not None
    if not -90 <= lat <= 90:
        raise invalid_parameter("lat", "must be between -90 and 90", code="invalid_lat")
    if not -180 <= lon <= 180:
        raise invalid_parameter("lon", "must be between -180 and 180", code="invalid_lon")
    if not 0 < radius <= MAX_RADIUS_MI:
        raise invalid_parameter(
            "radius_mi",
            f"must be greater than 0 and at most {MAX_RADIUS_MI:g} miles",
            code="invalid_radius_mi",
        )
    return lat, lon, radius


def _permit_type(params: dict[str, list[str]]) -> str | None:
    raw = _single(params, "permit_type")
    if raw is None:
        return None
    for name in PERMIT_TYPES:
        if raw.casefold() == name.casefold():
            return name
    raise invalid_parameter(
        "permit_type", "must be one of " + ", ".join(PERMIT_TYPES), code="invalid_permit_type"
    )


def _status(params: dict[str, list[str]]) -> str | None:
    raw = _single(params, "status")
    if raw is None:
        return None
    value = _SPACES.sub(" ", raw)
    if len(value) > MAX_STATUS_LENGTH or not value.isprintable():
        raise invalid_parameter(
            "status",
            f"must be a portal status text of at most {MAX_STATUS_LENGTH} printable characters",
            code="invalid_status",
        )
    return value


def _zip(params: dict[str, list[str]]) -> str | None:
    raw = _single(params, "zip")
    if raw is None:
        return None
    match = _ZIP.fullmatch(raw)
    if match is None:
        raise invalid_parameter(
            "zip", "must be a 5-digit ZIP code (ZIP+4 is accepted)", code="invalid_zip"
        )
    return match.group(1)


def _limit(params: dict[str, list[str]]) -> int:
    raw = _single(params, "limit")
    if raw is None:
        return DEFAULT_LIMIT
    if not raw.isascii() or not raw.isdigit() or not 1 <= int(raw) <= MAX_LIMIT:
        raise invalid_parameter(
            "limit", f"must be an integer from 1 to {MAX_LIMIT}", code="invalid_limit"
        )
    return int(raw)


def _value(params: dict[str, list[str]], name: str) -> float | None:
    value = _number(params, name)
    if value is not None and not 0 <= value <= MAX_VALUE:
        raise invalid_parameter(
            name, f"must be from 0 to {MAX_VALUE} (dollars)", code=f"invalid_{name}"
        )
    return value


def group(items: Iterable[tuple[str, str]]) -> dict[str, list[str]]:
    params: dict[str, list[str]] = {}
    for name, value in items:
        params.setdefault(name, []).append(value)
    return params


def parse_search(items: Iterable[tuple[str, str]]) -> SearchQuery:
    """The validated query, or a 400 problem naming the first offending parameter.

    Unsupported filters are reported before anything else: their presence changes what the
    client asked, so no other answer would be honest.
    """
    params = group(items)
    for name in params:
        if name.lower() in PEOPLE_FILTERS:
            raise invalid_parameter(
                name,
                "searching by contractor, owner or other people is not supported",
                code="unsupported_filter",
            )
    for name in params:
        if name not in KNOWN_PARAMETERS:
            raise invalid_parameter(
                name, "is not a supported discovery filter", code="unsupported_filter"
            )
    sources = _scope(params)
    lat, lon, radius = _radius(params)
    filters = Filters(
        parcels=_parcels(params),
        zip=_zip(params),
        latitude=lat,
        longitude=lon,
        radius_mi=radius,
        permit_type=_permit_type(params),
        date_from=_date(params, "date_from"),
        date_to=_date(params, "date_to"),
        value_min=_value(params, "value_min"),
        value_max=_value(params, "value_max"),
        status=_status(params),
    )
    if filters.date_from and filters.date_to and filters.date_from > filters.date_to:
        raise invalid_parameter(
            "date_to", "must not be before date_from", code="invalid_date_range"
        )
    if (
        filters.value_min is not None
        and filters.value_max is not None
        and filters.value_min > filters.value_max
    ):
        raise invalid_parameter(
            "value_max", "must not be less than value_min", code="invalid_value_range"
        )
    limit = _limit(params)
    cursor = _single(params, "cursor")
    scoped = any(name in params for name in SCOPE_PARAMETERS)
    if filters == Filters() and not scoped:
        raise BadRequest(
            "At least one filter is required: city, county, jurisdiction, parcel, zip, "
            "lat/lon/radius_mi, permit_type, date_from/date_to, value_min/value_max or status. "
            "limit and cursor alone are not filters.",
            code="filter_required",
        )
    return SearchQuery(sources=sources, filters=filters, limit=limit, cursor=cursor, scoped=scoped)
