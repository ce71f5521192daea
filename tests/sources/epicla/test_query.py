"""ArcGIS where clauses for discovery: literals the layer (and the simulator) accept."""

from __future__ import annotations

from permitapi.portalsim.epicla.where import compile_where
from permitapi.portalsim.epicla.wire import FIELDS
from permitapi.sources.base import SearchCriteria
from permitapi.sources.epicla.query import search_where, sql_number


def test_numbers_are_plain_decimals_never_rounded_or_exponents() -> None:
    assert sql_number(1_234_567.5) == "1234567.5"
    assert sql_number(1.5e6) == "1500000"
    assert sql_number(0.0) == "0"
    assert sql_number(1e-7) == "0.0000001"
    assert sql_number(12.25) == "12.25"


def test_value_bounds_compile_and_select_exactly() -> None:
    where = search_where(SearchCriteria(value_min=1_234_567.5, value_max=2_000_000))
    assert where == "PERMIT_VALUATION >= 1234567.5 AND PERMIT_VALUATION <= 2000000"
    matches = compile_where(where, FIELDS)
    assert matches({"PERMIT_VALUATION": 1_234_567.5})
    assert not matches({"PERMIT_VALUATION": 1_234_567.0})
