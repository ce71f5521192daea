"""Saved-search criteria: a JSON object of discovery filters, validated exactly as
GET /permits/search validates its query (`discovery.filters.parse_search`), with the same
codes. The object is turned into the query items a client would have sent; each problem then
names the member it came from (`criteria.zip`, location `body`).
"""

from __future__ import annotations

import math
from typing import Any

from permitapi.discovery.filters import (
    CONTROL_PARAMETERS,
    KNOWN_PARAMETERS,
    PEOPLE_FILTERS,
    SearchQuery,
    parse_search,
)
from permitapi.errors import BadRequest, invalid_parameter
from permitapi.kit.plain_numbers import plain_decimal

PREFIX = "criteria"
# Evaluations read pages of this size (the spec's baseline: up to 100 newest identities).
EVALUATION_PAGE_SIZE = 100
# Larger JSON numbers are no filter value; the search's own checks word the 400.
MAX_JSON_NUMBER = 10**18


def _member(name: str) -> str:
    return f"{PREFIX}.{name}"


def _refused(name: str, message: str, code: str) -> BadRequest:
    return invalid_parameter(_member(name), message, code=code, location="body")


def _scalar(name: str, value: Any) -> str:
    # bool first: it is an int to Python, but `true` is no filter value.
    if isinstance(value, bool) or value is None or isinstance(value, (dict, list)):
        kind = "null" if value is None else type(value).__name__
        raise _refused(name, f"must be a string or a number, not {kind}", f"invalid_{name}")
    if isinstance(value, (int, float)):
        # JSON numbers in their plain spelling, as a query string would carry them; Python's
        # parser also reads `Infinity` and `NaN`, which are no filter value.
        if not math.isfinite(value) or abs(value) > MAX_JSON_NUMBER:
            raise _refused(name, "must be a finite number", f"invalid_{name}")
        return plain_decimal(value)
    assert isinstance(value, str)
    return value


def query_items(criteria: dict[str, Any]) -> list[tuple[str, str]]:
    """The query items of a search with these criteria. A list gives one item per element
    (`parcel` is the repeatable filter); scalars one item."""
    for name in criteria:
        if name.lower() in PEOPLE_FILTERS:
            raise _refused(
                name,
                "searching by contractor, owner or other people is not supported",
                "unsupported_filter",
            )
        if name in CONTROL_PARAMETERS:
            raise _refused(
                name,
                "limit and cursor page through one search; they are not criteria",
                "unsupported_filter",
            )
        if name not in KNOWN_PARAMETERS:
            raise _refused(name, "is not a supported discovery filter", "unsupported_filter")
    items: list[tuple[str, str]] = []
    for name, value in criteria.items():
        if isinstance(value, list):
            if not value:
                raise _refused(name, "must not be empty", f"invalid_{name}")
            items.extend((name, _scalar(name, element)) for element in value)
        else:
            items.append((name, _scalar(name, value)))
    return items


def _relabelled(error: BadRequest) -> BadRequest:
    """The search's own problem, naming the criteria member in the body."""
    parameter = error.extra.get("parameter")
    issues = error.extra.get("errors") or []
    message = issues[0]["message"] if issues else error.detail
    if parameter is None:  # filter_required names no parameter: the whole object is at fault
        return BadRequest(
            error.detail.replace("limit and cursor alone are not filters.", "").strip(),
            code=error.code,
            extra={
                "parameter": PREFIX,
                "errors": [{"parameter": PREFIX, "location": "body", "message": message}],
            },
        )
    return _refused(str(parameter), message, error.code)


def parse_criteria(criteria: dict[str, Any]) -> SearchQuery:
    """The search the criteria describe (pages of EVALUATION_PAGE_SIZE), or the 400 the
    search endpoint would answer for them."""
    items = query_items(criteria)
    try:
        query = parse_search([*items, ("limit", str(EVALUATION_PAGE_SIZE))])
    except BadRequest as error:
        raise _relabelled(error) from None
    return query


def same_search(first: SearchQuery, second: SearchQuery) -> bool:
    """Whether two criteria select the same permits, however they were spelled."""
    return first.sources == second.sources and first.filters == second.filters
