"""Numbers in every portal query literal are plain decimals: never an exponent (which neither
SoQL nor ArcGIS SQL reads), never rounded."""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from permitapi.kit.plain_numbers import parse_plain_decimal, plain_decimal
from permitapi.sources.base import SearchCriteria
from permitapi.sources.epicla.query import search_params
from permitapi.sources.ladbs.soql_search import search_where

EXPONENT = re.compile(r"[0-9.][eE][-+]?[0-9]")


@settings(max_examples=500, database=None)
@given(st.floats(allow_nan=False, allow_infinity=False))
def test_plain_decimal_reads_back_as_the_same_float(value: float) -> None:
    text = plain_decimal(value)
    assert re.fullmatch(r"-?[0-9]+(\.[0-9]+)?", text), text
    assert float(text) == value


@settings(max_examples=200, database=None)
@given(
    st.floats(min_value=0, max_value=1e12),
    st.floats(min_value=-90, max_value=90),
    st.floats(min_value=-180, max_value=180),
)
def test_no_query_builder_writes_an_exponent(value: float, lat: float, lon: float) -> None:
    criteria = SearchCriteria(
        value_min=value, value_max=value, latitude=lat, longitude=lon, radius_mi=0.00001
    )
    where = search_where(criteria)
    assert not EXPONENT.search(where), where
    for name, param in search_params(criteria).items():
        assert not EXPONENT.search(param), (name, param)


def test_small_values_are_written_in_full() -> None:
    criteria = SearchCriteria(value_min=0.00001, latitude=0.00001, longitude=-118.25, radius_mi=1)
    assert "valuation::number >= 0.00001" in search_where(criteria)
    assert "within_circle(geolocation, 0.00001, -118.25, " in search_where(criteria)
    params = search_params(criteria)
    assert "PERMIT_VALUATION >= 0.00001" in params["where"]
    assert params["geometry"] == "-118.25,0.00001"


def test_client_numbers_are_plain_decimals_only() -> None:
    assert parse_plain_decimal("1500") == 1500.0
    assert parse_plain_decimal(" -34.05 ") == -34.05
    assert parse_plain_decimal(".5") == 0.5
    assert parse_plain_decimal("\uff11\uff10\uff10") == 100.0  # full-width, NFKC
    assert parse_plain_decimal("\u00b2") == 2.0  # NFKC reads a superscript two as 2
    for refused in ("1_000", "1e3", "inf", "nan", "+5", "0x10", "", "-", ".", "1.2.3",
                    "\u0661", "9" * 40):  # fmt: skip
        assert parse_plain_decimal(refused) is None, refused
