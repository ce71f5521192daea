"""Discovery query parsing: every accepted form and every 400 with its code and parameter."""

from __future__ import annotations

from datetime import date
from urllib.parse import parse_qsl

import pytest

from permitapi.discovery.filters import MAX_LIMIT, Filters, SearchQuery, parse_search
from permitapi.errors import BadRequest

PARCEL = "5432-012-019"


def parse(query: str) -> SearchQuery:
    return parse_search(parse_qsl(query, keep_blank_values=True))


def refused(query: str) -> BadRequest:
    with pytest.raises(BadRequest) as caught:
        parse(query)
    return caught.value


@pytest.mark.parametrize(
    ("query", "sources"),
    [
        ("zip=90012", ("ladbs", "epicla")),
        ("zip=90012&city=Los+Angeles", ("ladbs",)),
        ("zip=90012&city=LOS++angeles", ("ladbs",)),
        ("zip=90012&county=los+angeles+county", ("epicla",)),
        ("zip=90012&jurisdiction=EPICLA", ("epicla",)),
        ("zip=90012&city=Los+Angeles&jurisdiction=ladbs", ("ladbs",)),
    ],
)
def test_scope(query: str, sources: tuple[str, ...]) -> None:
    assert parse(query).sources == sources


def test_parcels_are_normalised_deduplicated_and_sorted() -> None:
    query = parse(f"parcel={PARCEL}&parcel=5432 012 019&parcel=1111111111&parcel=5432012019")
    assert query.filters.parcels == ("1111111111", "5432012019")


def test_25_distinct_parcels_pass_26_do_not() -> None:
    ok = "&".join(f"parcel={1000000000 + i}" for i in range(25))
    assert len(parse(ok + "&parcel=1000000000").filters.parcels) == 25
    error = refused(ok + "&parcel=2000000000")
    assert (error.code, error.extra["parameter"]) == ("too_many_parcels", "parcel")


def test_full_filter_set() -> None:
    query = parse(
        "lat=34.05&lon=-118.25&radius_mi=1.5&permit_type=electrical&date_from=2026-01-01"
        "&date_to=2026-02-01&value_min=0&value_max=500000&status=Issued&zip=90012-1234&limit=100"
    )
    assert query.filters == Filters(
        zip="90012",
        latitude=34.05,
        longitude=-118.25,
        radius_mi=1.5,
        permit_type="Electrical",
        date_from=date(2026, 1, 1),
        date_to=date(2026, 2, 1),
        value_min=0.0,
        value_max=500000.0,
        status="Issued",
    )
    assert query.limit == MAX_LIMIT


@pytest.mark.parametrize(
    ("query", "code", "parameter"),
    [
        ("", "filter_required", None),
        ("limit=5", "filter_required", None),
        ("limit=5&cursor=abc", "filter_required", None),
        ("zip=90012&contractor=Acme", "unsupported_filter", "contractor"),
        ("contractor=Acme", "unsupported_filter", "contractor"),
        ("zip=90012&owner_name=Smith", "unsupported_filter", "owner_name"),
        ("zip=90012&permit_typ=Building", "unsupported_filter", "permit_typ"),
        ("zip=90012&city=Pasadena", "invalid_city", "city"),
        ("zip=90012&county=Orange+County", "invalid_county", "county"),
        ("zip=90012&jurisdiction=aca:sandiego", "invalid_jurisdiction", "jurisdiction"),
        ("zip=90012&city=Los+Angeles&county=Los+Angeles+County", "conflicting_scope", "county"),
        ("zip=90012&city=Los+Angeles&jurisdiction=epicla", "conflicting_scope", "jurisdiction"),
        ("parcel=12-34", "invalid_parcel", "parcel"),
        ("parcel=543201201X", "invalid_parcel", "parcel"),
        ("parcel=", "invalid_parcel", "parcel"),
        ("zip=9001", "invalid_zip", "zip"),
        ("zip=90012&zip=90013", "invalid_zip", "zip"),
        ("zip=", "invalid_zip", "zip"),
        ("lat=34&lon=-118", "incomplete_radius", "radius_mi"),
        ("radius_mi=2", "incomplete_radius", "lat"),
        ("lat=95&lon=-118&radius_mi=1", "invalid_lat", "lat"),
        ("lat=34&lon=-181&radius_mi=1", "invalid_lon", "lon"),
        ("lat=34&lon=-118&radius_mi=0", "invalid_radius_mi", "radius_mi"),
        ("lat=34&lon=-118&radius_mi=26", "invalid_radius_mi", "radius_mi"),
        ("lat=nan&lon=-118&radius_mi=1", "invalid_lat", "lat"),
        ("lat=north&lon=-118&radius_mi=1", "invalid_lat", "lat"),
        ("permit_type=Grading", "invalid_permit_type", "permit_type"),
        ("date_from=2026-13-01", "invalid_date_from", "date_from"),
        ("date_to=01/02/2026", "invalid_date_to", "date_to"),
        ("date_from=2026-02-01&date_to=2026-01-31", "invalid_date_range", "date_to"),
        ("value_min=abc", "invalid_value_min", "value_min"),
        ("value_max=-1", "invalid_value_max", "value_max"),
        ("value_min=inf", "invalid_value_min", "value_min"),
        ("value_min=10&value_max=5", "invalid_value_range", "value_max"),
        # Plain decimals only: Python's float() reads all of these.
        ("value_min=1_000", "invalid_value_min", "value_min"),
        ("value_max=5e5", "invalid_value_max", "value_max"),
        ("value_min=nan", "invalid_value_min", "value_min"),
        ("value_min=%2B5", "invalid_value_min", "value_min"),
        ("value_min=0x10", "invalid_value_min", "value_min"),
        ("value_max=1000000000001", "invalid_value_max", "value_max"),
        ("lat=3_4&lon=-118&radius_mi=1", "invalid_lat", "lat"),
        ("lat=34&lon=-1e2&radius_mi=1", "invalid_lon", "lon"),
        ("lat=34&lon=-118&radius_mi=infinity", "invalid_radius_mi", "radius_mi"),
        ("value_min=%D9%A1", "invalid_value_min", "value_min"),  # Arabic-Indic one
        ("zip=%D9%A9%D9%A0%D9%A0%D9%A1%D9%A2", "invalid_zip", "zip"),
        ("zip=90012&limit=1_0", "invalid_limit", "limit"),
        # Dates inside 1900-01-01 .. 2100-12-31 only
        ("date_to=9999-12-31", "invalid_date_range", "date_to"),
        ("date_from=1899-12-31", "invalid_date_range", "date_from"),
        ("date_from=2101-01-01", "invalid_date_range", "date_from"),
        ("status=" + "x" * 101, "invalid_status", "status"),
        ("zip=90012&limit=0", "invalid_limit", "limit"),
        ("zip=90012&limit=101", "invalid_limit", "limit"),
        ("zip=90012&limit=ten", "invalid_limit", "limit"),
        ("zip=90012&cursor=", "invalid_cursor", "cursor"),
    ],
)
def test_refusals(query: str, code: str, parameter: str | None) -> None:
    error = refused(query)
    assert error.status == 400
    assert error.code == code
    assert error.extra.get("parameter") == parameter


def test_full_width_digits_read_as_their_ascii_value() -> None:
    full_width = parse(
        "zip=%EF%BC%99%EF%BC%90%EF%BC%90%EF%BC%91%EF%BC%92&value_min=%EF%BC%91%EF%BC%90"
        "&date_from=%EF%BC%92%EF%BC%90%EF%BC%92%EF%BC%96-01-01"
    )
    assert full_width.filters == parse("zip=90012&value_min=10&date_from=2026-01-01").filters


def test_the_date_range_edges_are_accepted() -> None:
    edges = parse("date_from=1900-01-01&date_to=2100-12-31").filters
    assert (edges.date_from, edges.date_to) == (date(1900, 1, 1), date(2100, 12, 31))


def test_equal_filters_spelled_differently_are_canonically_equal() -> None:
    a = parse(f"parcel={PARCEL}&parcel=1111111111&permit_type=building&zip=90012-0001")
    b = parse("zip=90012&permit_type=Building&parcel=1111111111&parcel=5432012019")
    assert a.filters.canonical() == b.filters.canonical()
    c = parse("zip=90013&permit_type=Building&parcel=1111111111&parcel=5432012019")
    assert a.filters.canonical() != c.filters.canonical()


@pytest.mark.parametrize(
    ("query", "sources"),
    [
        ("city=Los+Angeles", ("ladbs",)),
        ("county=Los+Angeles+County", ("epicla",)),
        ("jurisdiction=epicla&limit=5", ("epicla",)),
        ("city=los+angeles&jurisdiction=ladbs", ("ladbs",)),
    ],
)
def test_a_scope_alone_is_a_filter(query: str, sources: tuple[str, ...]) -> None:
    parsed = parse_search(parse_qsl(query))
    assert parsed.sources == sources
    assert parsed.filters == Filters()
    assert parsed.scoped is True
    assert parsed.filters.broad


def test_broad_means_dates_or_nothing() -> None:
    assert Filters().broad
    assert Filters(date_from=date(2026, 1, 1)).broad
    assert not Filters(date_from=date(2026, 1, 1), zip="90012").broad
    assert not Filters(permit_type="Building").broad
