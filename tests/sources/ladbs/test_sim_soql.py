"""The simulator's SoQL subset, directly and through the simulated Socrata endpoint."""

from __future__ import annotations

import pytest

from permitapi.portalsim.soql import SoqlError, run_query
from tests.sources.ladbs.conftest import LadbsSim

COLUMNS = frozenset({":id", "permit_nbr", "issue_date", "valuation", "status_desc", "geolocation"})
ROWS = [
    {":id": "a", "permit_nbr": "21016-20000-20141", "issue_date": "2021-09-13T00:00:00.000",
     "valuation": "10000", "status_desc": "Permit Finaled",
     "geolocation": {"type": "Point", "coordinates": [-118.2437, 34.0522]}},
    {":id": "b", "permit_nbr": "21030-20000-00256", "valuation": "0", "status_desc": "PC Approved"},
    {":id": "c", "permit_nbr": "20010-20000-02739", "issue_date": "2021-04-26T00:00:00.000",
     "valuation": "556000", "status_desc": "O'Brien Review",
     "geolocation": {"type": "Point", "coordinates": [-118.40, 34.10]}},
]  # fmt: skip


def ids(params: dict[str, str]) -> list[str]:
    return [r["permit_nbr"][-5:] for r in run_query(ROWS, params, COLUMNS)]


def test_where_operators_and_casts() -> None:
    assert ids({"$where": "valuation::number > 5000 AND valuation::number <= 556000"}) == [
        "20141",
        "02739",
    ]
    assert ids({"$where": "valuation > '5000'"}) == ["02739"]  # text compares lexically
    assert ids({"$where": "issue_date IS NULL"}) == ["00256"]
    assert ids({"$where": "NOT (issue_date IS NULL) AND issue_date >= '2021-05-01T00:00:00'"}) == [
        "20141"
    ]
    assert ids({"$where": "status_desc in('PC Approved', 'O''Brien Review')"}) == [
        "00256",
        "02739",
    ]
    assert ids({"$where": "status_desc = 'PC Approved' OR (valuation::number = 10000)"}) == [
        "20141",
        "00256",
    ]
    assert ids({"$where": "within_circle(geolocation, 34.0522, -118.2437, 1000)"}) == ["20141"]
    assert ids({"permit_nbr": "21030-20000-00256"}) == ["00256"]


@pytest.mark.parametrize(
    "options",
    [
        "'PC Approved', 'O''Brien Review'",
        "'2021-09-13T00:00:00.000', 'b'",  # a timestamp literal matches the same moment
        "'2021-09-13', '2021-04-26T00:00'",  # other spellings of the same moments
        "'10000', '556000', 'x'",
        "'0'",
    ],
)
@pytest.mark.parametrize("column", ["status_desc", "issue_date", "valuation", ":id"])
def test_in_list_answers_as_the_equivalent_comparisons(column: str, options: str) -> None:
    # `in(...)` over literals is matched by set lookups; it must agree with `=` one by one
    # (nulls included: `issue_date` is absent on one row).
    equalities = " OR ".join(f"{column} = {o.strip()}" for o in options.split(", "))
    assert ids({"$where": f"{column} in({options})"}) == ids({"$where": equalities})
    assert ids({"$where": f"{column} NOT in({options})"}) == ids({"$where": f"NOT ({equalities})"})


def test_select_order_limit_offset() -> None:
    assert ids({"$order": "issue_date DESC, :id"}) == ["00256", "20141", "02739"]  # null largest
    assert ids({"$order": "issue_date DESC NULL LAST, :id"}) == ["20141", "02739", "00256"]
    assert ids({"$order": "issue_date null first"}) == ["00256", "02739", "20141"]
    assert ids({"$order": "valuation"}) == [
        "00256",
        "20141",
        "02739",
    ]
    assert ids({"$order": ":id", "$limit": "1", "$offset": "1"}) == ["00256"]
    assert run_query(ROWS, {"$select": "max(issue_date), count(*) AS n"}, COLUMNS) == [
        {"max_issue_date": "2021-09-13T00:00:00.000", "n": "3"}
    ]
    assert run_query(ROWS, {"$select": "permit_nbr AS p", "$limit": "1"}, COLUMNS) == [
        {"p": "21016-20000-20141"}
    ]
    assert ":id" not in run_query(ROWS, {}, COLUMNS)[0]


@pytest.mark.parametrize(
    "params",
    [
        {"$where": "nope = 1"},
        {"$where": "valuation >"},
        {"$where": "status_desc = 'unterminated"},
        {"$where": "frobnicate(valuation)"},
        {"$order": "nope"},
        {"$limit": "-1"},
        {"$select": "permit_nbr, max(issue_date)"},
        {"unknown_column": "x"},
    ],
)
def test_queries_socrata_refuses(params: dict[str, str]) -> None:
    with pytest.raises(SoqlError):
        run_query(ROWS, params, COLUMNS)


async def test_endpoint_answers_socrata_style_errors(sim: LadbsSim) -> None:
    client = sim.http
    url = "https://data.lacity.org/resource/gwh9-jnip.json"
    response = await client.request("ladbs", "GET", url, params={"$where": "nope = 1"})
    assert response.status_code == 400
    body = response.json()
    assert body["error"] is True
    assert body["code"] == "query.soql.no-such-column"
    response = await client.request("ladbs", "GET", url, params={"$select": "count(*)"})
    assert int(response.json()[0]["count"]) > 100
    response = await client.request(
        "ladbs", "GET", "https://data.lacity.org/resource/9w5z-rg2h.json", params={"$limit": "3"}
    )
    rows = response.json()
    assert len(rows) == 3
    assert set(rows[0]) >= {"permit", "inspection_date", "inspection", "inspection_result"}
