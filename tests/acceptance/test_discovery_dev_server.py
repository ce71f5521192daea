"""Black-box discovery: GET /permits/search on a real `permitapi dev` server (SQLite and
PostgreSQL), over the real LADBS and EPIC-LA adapters and the portal simulator mounted at
/_sim. Expected answers come from the simulator's ground truth (its control API), faults are
injected through the control API, and metering is read back through GET /usage.

Cursor expiry cannot be shown here (the server's clock cannot be moved from outside): it is
tested at the ASGI level with a FrozenClock in tests/discovery/test_search_over_sim.py.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo

import httpx
import pytest

from permitapi.discovery.merge import distance_mi
from permitapi.portalsim.ladbs_data import group_of
from tests.support.dev_server import DevServer
from tests.support.problems import assert_problem

pytestmark = pytest.mark.slow

URL = "/api/v1/permits/search"
CONTROL = "/_sim/_control"


@dataclass(frozen=True)
class Truth:
    """One permit as the simulator holds it, reduced to what discovery can see."""

    permit_number: str
    jurisdiction: str
    issued: date | None
    parcel: str | None
    latitude: float | None
    longitude: float | None
    address: str | None
    valuation: float | None
    raw_status: str
    permit_type: str | None


def _truth(detail: dict[str, Any]) -> Truth:
    issued = detail.get("issued_date")
    return Truth(
        permit_number=detail["permit_number"],
        jurisdiction=detail["jurisdiction"],
        issued=date.fromisoformat(issued) if issued else None,
        parcel=detail.get("parcel"),
        latitude=detail.get("latitude"),
        longitude=detail.get("longitude"),
        address=detail.get("address"),
        valuation=detail.get("valuation"),
        raw_status=detail["raw_status"],
        permit_type=detail.get("permit_type"),
    )


def discoverable(http: httpx.Client) -> list[Truth]:
    """Every permit the two discovery sources publish: all EPIC-LA cases, and the LADBS
    permits of the Building group (the only group in the gwh9-jnip dataset)."""
    found = []
    for slug in ("ladbs", "epicla"):
        listed = http.get(f"{CONTROL}/permits", params={"source": slug, "limit": 10000})
        assert listed.status_code == 200, listed.text
        for item in listed.json()["permits"]:
            detail = http.get(f"{CONTROL}/permits/{slug}/{item['permit_number']}")
            assert detail.status_code == 200, detail.text
            body = detail.json()
            if slug == "ladbs" and group_of(body["permit_type"]) != "Building":
                continue
            found.append(_truth(body))
    return found


@pytest.fixture(scope="module")
def truth(server: DevServer) -> list[Truth]:
    with httpx.Client(base_url=server.base_url, timeout=30) as client:
        return discoverable(client)


@pytest.fixture(autouse=True)
def no_faults(http: httpx.Client) -> Iterator[None]:
    http.delete(f"{CONTROL}/faults")
    yield
    http.delete(f"{CONTROL}/faults")


def new_key(server: DevServer, plan: str, *, addon: bool) -> dict[str, str]:
    args = ["keys", "create", "--plan", plan, "--json"]
    if addon:
        args.append("--discovery-addon")
    created = server.cli(*args)
    assert created.returncode == 0, created.stderr
    return {"X-API-Key": json.loads(created.stdout)["live_key"]}


@pytest.fixture(scope="module")
def pro(server: DevServer) -> dict[str, str]:
    """A pro key with the add-on, of this module only (the dev keys belong to other tests)."""
    return new_key(server, "pro", addon=True)


def used(http: httpx.Client, headers: dict[str, str]) -> int:
    response = http.get("/api/v1/usage", headers=headers)
    assert response.status_code == 200, response.text
    return int(response.json()["discovery"]["used"])


def walk(
    http: httpx.Client, headers: dict[str, str], params: dict[str, Any] | list[tuple[str, Any]]
) -> list[dict[str, Any]]:
    """Every page of one query (each must be a complete 200); the results in order."""
    results: list[dict[str, Any]] = []
    items = list(params.items()) if isinstance(params, dict) else list(params)
    cursor = None
    for _ in range(200):
        page = http.get(
            URL, params=items + ([("cursor", cursor)] if cursor else []), headers=headers
        )
        assert page.status_code == 200, page.text
        body = page.json()
        assert body["partial"] is False, body["warnings"]
        assert body["result_count"] == len(body["results"])
        results.extend(body["results"])
        cursor = body["pagination"]["next_cursor"]
        assert body["pagination"]["has_more"] is (cursor is not None)
        if cursor is None:
            return results
    raise AssertionError("more than 200 pages")


def keys_of(results: list[dict[str, Any]]) -> list[tuple[str, str]]:
    return [(r["jurisdiction"], r["permit_number"]) for r in results]


def assert_newest_first(results: list[dict[str, Any]]) -> None:
    """Issued permits newest first across both sources; not yet issued ones after them."""
    dated = [r["issued_date"] for r in results if r["issued_date"]]
    assert dated == sorted(dated, reverse=True)
    seen_undated = False
    for r in results:
        if r["issued_date"] is None:
            seen_undated = True
        else:
            assert not seen_undated, "an issued permit follows a not yet issued one"


def la_today() -> date:
    return datetime.now(ZoneInfo("America/Los_Angeles")).date()


# -- results and pagination -------------------------------------------------------------------


def test_both_sources_merged_newest_first_and_every_page_matches_the_ground_truth(
    http: httpx.Client, pro: dict[str, str], truth: list[Truth]
) -> None:
    dated = sorted(t.issued for t in truth if t.issued)
    since = dated[len(dated) // 2]  # about half the permits: several pages from both sources
    results = walk(http, pro, {"date_from": since.isoformat(), "limit": 17})
    expected = {(t.jurisdiction, t.permit_number) for t in truth if t.issued and t.issued >= since}
    got = keys_of(results)
    assert len(got) == len(set(got)), "a permit was repeated across pages"
    assert set(got) == expected
    assert {j for j, _ in got} == {"ladbs", "epicla"}
    assert_newest_first(results)
    # thin hits: no owner, contractor or inspection fields
    assert set(results[0]) == {
        "permit_number", "jurisdiction", "address", "permit_type", "status", "valuation",
        "issued_date", "applied_date",
    }  # fmt: skip


@pytest.mark.parametrize(
    ("params", "slug"),
    [({"city": "Los Angeles"}, "ladbs"), ({"county": "Los Angeles County"}, "epicla")],
)
def test_a_scope_alone_answers_that_sources_permits_newest_first(
    http: httpx.Client, pro: dict[str, str], truth: list[Truth], params: dict[str, str], slug: str
) -> None:
    """A newcomer's first search: no filter but the city or the county."""
    first = http.get(URL, params={**params, "limit": 20}, headers=pro)
    assert first.status_code == 200, first.text
    body = first.json()
    assert body["partial"] is False
    assert set(body["source_freshness"]) == {slug}
    assert {r["jurisdiction"] for r in body["results"]} == {slug}
    assert body["result_count"] == 20
    assert body["pagination"]["has_more"] is True
    assert_newest_first(body["results"])
    newest = sorted(
        (t for t in truth if t.jurisdiction == slug and t.issued),
        key=lambda t: t.issued or date.min,
        reverse=True,
    )
    assert body["results"][0]["issued_date"] == newest[0].issued.isoformat()  # type: ignore[union-attr]
    results = walk(http, pro, {**params, "limit": 100})
    got = keys_of(results)
    assert len(got) == len(set(got))
    assert set(got) == {(t.jurisdiction, t.permit_number) for t in truth if t.jurisdiction == slug}
    assert_newest_first(results)


def test_a_walk_including_unissued_permits_neither_repeats_nor_drops(
    http: httpx.Client, pro: dict[str, str], truth: list[Truth]
) -> None:
    results = walk(http, pro, {"value_min": 0, "limit": 100})
    expected = {(t.jurisdiction, t.permit_number) for t in truth if t.valuation is not None}
    got = keys_of(results)
    assert len(got) == len(set(got))
    assert set(got) == expected
    assert any(r["issued_date"] is None for r in results)
    assert_newest_first(results)


def test_source_freshness_is_real(
    http: httpx.Client, pro: dict[str, str], truth: list[Truth]
) -> None:
    today = la_today()
    response = http.get(URL, params={"permit_type": "Building", "limit": 1}, headers=pro)
    assert response.status_code == 200, response.text
    freshness = response.json()["source_freshness"]
    assert set(freshness) == {"ladbs", "epicla"}
    for slug, fresh in freshness.items():
        newest = max(
            t.issued for t in truth if t.jurisdiction == slug and t.issued and t.issued <= today
        )
        assert fresh == {
            "newest_issue_date": newest.isoformat(),
            "requested_through": today.isoformat(),
            "lag_days": (today - newest).days,
            "reliability": "operational",
        }
    # a window that ended long ago: requested through its end, the lag is still the source's
    ended = today - timedelta(days=400)
    response = http.get(
        URL,
        params={"permit_type": "Building", "date_to": ended.isoformat(), "limit": 1},
        headers=pro,
    )
    assert response.status_code == 200, response.text
    for slug, fresh in response.json()["source_freshness"].items():
        assert fresh["requested_through"] == ended.isoformat()
        assert fresh["lag_days"] == freshness[slug]["lag_days"]


def test_value_range_and_zip_filters_match_the_ground_truth(
    http: httpx.Client, pro: dict[str, str], truth: list[Truth]
) -> None:
    values = sorted(t.valuation for t in truth if t.valuation)
    low, high = values[len(values) // 3], values[2 * len(values) // 3]
    results = walk(http, pro, {"value_min": low, "value_max": high, "limit": 100})
    expected = {
        (t.jurisdiction, t.permit_number)
        for t in truth
        if t.valuation is not None and low <= t.valuation <= high
    }
    assert set(keys_of(results)) == expected
    zipped = next(t for t in truth if t.jurisdiction == "epicla" and t.address)
    assert zipped.address is not None
    zip_code = zipped.address.split()[-1]
    assert zip_code.isdigit()
    assert len(zip_code) == 5
    results = walk(http, pro, {"zip": zip_code, "limit": 100})
    expected = {
        (t.jurisdiction, t.permit_number)
        for t in truth
        if t.address and t.address.split()[-1] == zip_code
    }
    assert set(keys_of(results)) == expected


def test_status_type_and_precise_value_filters_reach_both_sources(
    http: httpx.Client, pro: dict[str, str], truth: list[Truth]
) -> None:
    # a portal label (any case) is matched as such on both sources ...
    results = walk(http, pro, {"status": "ISSUED", "limit": 100})
    expected = {
        (t.jurisdiction, t.permit_number) for t in truth if t.raw_status.casefold() == "issued"
    }
    assert expected
    assert set(keys_of(results)) == expected
    # ... and a normalised status in its exact spelling selects every label mapped to it
    results = walk(http, pro, {"status": "expired", "limit": 100})
    assert {r["jurisdiction"] for r in results} == {"ladbs", "epicla"}
    assert all("expired" in str(r["status"]).casefold() for r in results), results
    # a valuation bound that short float formatting would round or write as 1.5e+06
    big = sorted(t.valuation for t in truth if t.valuation and t.valuation > 1_000_000)
    assert big, "the simulator has no valuation above a million"
    bound = big[len(big) // 2]
    results = walk(http, pro, {"value_min": bound, "limit": 100})
    expected = {
        (t.jurisdiction, t.permit_number)
        for t in truth
        if t.valuation is not None and t.valuation >= bound
    }
    assert set(keys_of(results)) == expected
    building = walk(http, pro, {"permit_type": "building", "limit": 100})
    got = set(keys_of(building))
    assert {k for k in got if k[0] == "ladbs"} == {
        (t.jurisdiction, t.permit_number) for t in truth if t.jurisdiction == "ladbs"
    }
    county = {
        (t.jurisdiction, t.permit_number)
        for t in truth
        if t.jurisdiction == "epicla" and t.permit_type and "Building" in t.permit_type
    }
    assert county
    assert county <= got


# -- parcels and radius -----------------------------------------------------------------------


def _spelled(parcel: str) -> str:
    return f"{parcel[:4]} {parcel[4:7]}-{parcel[7:]}"


def test_parcels_are_normalised_deduplicated_and_exact_on_both_sources(
    http: httpx.Client, pro: dict[str, str], truth: list[Truth]
) -> None:
    city = next(t.parcel for t in truth if t.jurisdiction == "ladbs" and t.parcel)
    county = next(t.parcel for t in truth if t.jurisdiction == "epicla" and t.parcel)
    assert city is not None
    assert county is not None
    params = [
        ("parcel", _spelled(city)), ("parcel", city), ("parcel", county.replace("", " ").strip()),
        ("parcel", f"{county[:4]}-{county[4:]}"),
    ]  # fmt: skip
    results = walk(http, pro, params)
    expected = {(t.jurisdiction, t.permit_number) for t in truth if t.parcel in (city, county)}
    assert set(keys_of(results)) == expected
    assert {j for j, _ in keys_of(results)} == {"ladbs", "epicla"}

    before = used(http, pro)
    many = [("parcel", f"{4000000000 + n}") for n in range(26)]
    body = assert_problem(http.get(URL, params=many, headers=pro), 400, "too_many_parcels")
    assert body["parameter"] == "parcel"
    # 26 spellings of 25 distinct parcels are fine
    ok = http.get(URL, params=[*many[:25], ("parcel", _spelled(many[0][1]))], headers=pro)
    assert ok.status_code == 200, ok.text
    assert used(http, pro) == before + 1


def test_radius_search_returns_exactly_the_permits_inside_the_circle(
    http: httpx.Client, pro: dict[str, str], truth: list[Truth]
) -> None:
    lat, lon, miles = 34.18, -118.22, 9.0  # between the city's and the county's centres
    results = walk(http, pro, {"lat": lat, "lon": lon, "radius_mi": miles, "limit": 100})
    got = set(keys_of(results))
    by_key = {(t.jurisdiction, t.permit_number): t for t in truth}
    for key in got:
        permit = by_key[key]
        assert permit.latitude is not None
        assert permit.longitude is not None
        assert distance_mi(lat, lon, permit.latitude, permit.longitude) <= miles
    inside = {
        key
        for key, t in by_key.items()
        if t.latitude is not None
        and t.longitude is not None
        and distance_mi(lat, lon, t.latitude, t.longitude) <= miles - 0.001
    }
    assert inside <= got
    assert {j for j, _ in got} == {"ladbs", "epicla"}


# -- honesty about sources --------------------------------------------------------------------


def fault(http: httpx.Client, source: str, mode: str, count: int | None = None) -> None:
    response = http.post(f"{CONTROL}/faults", json={"source": source, "mode": mode, "count": count})
    assert response.status_code == 201, response.text


def settle(http: httpx.Client, headers: dict[str, str]) -> None:
    """One clean county read: the circuit breaker counts consecutive failed attempts, so a
    success after a fault keeps the next test's fault from opening it."""
    clean = http.get(
        URL, params={"jurisdiction": "epicla", "permit_type": "Building"}, headers=headers
    )
    assert clean.status_code == 200, clean.text
    assert clean.json()["partial"] is False, clean.text


def test_one_source_down_gives_partial_results_from_the_other(
    http: httpx.Client, pro: dict[str, str], truth: list[Truth]
) -> None:
    before = used(http, pro)
    # 3 failed attempts: exactly one read (the HTTP module's bounded retries), so the circuit
    # stays closed for the next tests.
    fault(http, "epicla", "down", count=3)
    response = http.get(URL, params={"permit_type": "Building", "limit": 10}, headers=pro)
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["partial"] is True
    assert body["results"]
    assert {r["jurisdiction"] for r in body["results"]} == {"ladbs"}
    assert [(w["source"], w["code"]) for w in body["warnings"]] == [
        ("epicla", "source_unavailable")
    ]
    assert body["source_freshness"]["epicla"]["reliability"] == "down"
    assert body["source_freshness"]["ladbs"]["reliability"] == "operational"
    assert body["pagination"]["has_more"] is True
    assert used(http, pro) == before + 1  # a partial 200 is a search
    settle(http, pro)


def test_empty_result_with_a_source_down_is_503_inconclusive(
    http: httpx.Client, pro: dict[str, str], truth: list[Truth]
) -> None:
    before = used(http, pro)
    fault(http, "epicla", "down", count=3)
    nowhere = "0000000001"
    assert all(t.parcel != nowhere for t in truth)
    response = http.get(URL, params={"parcel": nowhere}, headers=pro)
    body = assert_problem(response, 503, "source_inconclusive")
    assert int(response.headers["retry-after"]) >= 30
    assert body["retry_after_seconds"] == int(response.headers["retry-after"])
    assert [w["source"] for w in body["warnings"]] == ["epicla"]  # type: ignore[union-attr]
    assert body["source_freshness"]["epicla"]["reliability"] == "down"  # type: ignore[index]
    assert used(http, pro) == before  # a 503 costs nothing
    # the same search with both sources up is a verified empty 200
    verified = http.get(URL, params={"parcel": nowhere}, headers=pro)
    assert verified.status_code == 200, verified.text
    assert verified.json()["results"] == []
    assert verified.json()["partial"] is False
    assert used(http, pro) == before + 1


def test_a_window_newer_than_the_sources_have_published_is_503_lagging(
    http: httpx.Client, pro: dict[str, str], truth: list[Truth]
) -> None:
    newest = max(t.issued for t in truth if t.issued)
    start = newest + timedelta(days=1)
    before = used(http, pro)
    response = http.get(
        URL,
        params={"date_from": start.isoformat(), "date_to": (start + timedelta(days=6)).isoformat()},
        headers=pro,
    )
    body = assert_problem(response, 503, "source_lagging")
    assert response.headers["retry-after"] == "3600"
    freshness: dict[str, Any] = body["source_freshness"]  # type: ignore[assignment]
    assert set(freshness) == {"ladbs", "epicla"}
    codes = {(w["source"], w["code"]) for w in body["warnings"]}  # type: ignore[union-attr]
    assert codes == {("ladbs", "source_lagging"), ("epicla", "source_lagging")}
    for fresh in freshness.values():
        assert fresh["newest_issue_date"] < start.isoformat()
        assert fresh["lag_days"] is not None
    assert used(http, pro) == before


def test_a_lagging_source_is_warned_about_next_to_the_other_sources_results(
    http: httpx.Client, pro: dict[str, str], truth: list[Truth]
) -> None:
    """Make the county's newest issue date old through the control API: its newest cases
    lose their issue date. A window after its new newest date still gets the city's permits,
    with a source_lagging warning for the county."""
    county = sorted(
        (t for t in truth if t.jurisdiction == "epicla" and t.issued), key=lambda t: t.issued
    )
    newest_city = max(t.issued for t in truth if t.jurisdiction == "ladbs" and t.issued)
    cut = min(newest_city, la_today()) - timedelta(days=20)
    assert cut > county[0].issued  # type: ignore[operator]
    recent = [t for t in county if t.issued and t.issued > cut]
    try:
        for permit in recent:
            changed = http.put(
                f"{CONTROL}/permits/epicla/{permit.permit_number}", json={"issued_date": None}
            )
            assert changed.status_code == 200, changed.text
        start = cut + timedelta(days=1)
        response = http.get(URL, params={"date_from": start.isoformat()}, headers=pro)
        assert response.status_code == 200, response.text
        body = response.json()
        assert body["results"]
        assert {r["jurisdiction"] for r in body["results"]} == {"ladbs"}
        assert body["partial"] is False
        assert [(w["source"], w["code"]) for w in body["warnings"]] == [
            ("epicla", "source_lagging")
        ]
        county_fresh = body["source_freshness"]["epicla"]
        assert county_fresh["newest_issue_date"] <= cut.isoformat()
        assert county_fresh["lag_days"] >= 20
    finally:
        for permit in recent:
            http.put(
                f"{CONTROL}/permits/epicla/{permit.permit_number}",
                json={"issued_date": permit.issued.isoformat() if permit.issued else None},
            )


# -- cursors ----------------------------------------------------------------------------------


def test_tampered_foreign_and_mismatched_cursors_are_invalid(
    server: DevServer, http: httpx.Client, pro: dict[str, str]
) -> None:
    params = {"permit_type": "Building", "limit": 5}
    first = http.get(URL, params=params, headers=pro)
    assert first.status_code == 200, first.text
    cursor = first.json()["pagination"]["next_cursor"]
    assert cursor
    before = used(http, pro)

    version, payload, signature = cursor.split(".")
    state = json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))
    assert isinstance(state, dict)
    forged_state = json.dumps({**state, "p": {**state.get("p", {}), "o": {"ladbs": 0}}})
    forged = base64.urlsafe_b64encode(forged_state.encode()).decode().rstrip("=")
    flipped = signature[:-1] + ("A" if signature[-1] != "A" else "B")
    for bad in (f"{version}.{forged}.{signature}", f"{version}.{payload}.{flipped}", "garbage"):
        problem = assert_problem(
            http.get(URL, params={**params, "cursor": bad}, headers=pro), 400, "invalid_cursor"
        )
        assert problem["parameter"] == "cursor"
    # the same cursor under other filters or another scope
    assert_problem(
        http.get(
            URL, params={"permit_type": "Electrical", "limit": 5, "cursor": cursor}, headers=pro
        ),
        400,
        "invalid_cursor",
    )
    assert_problem(
        http.get(URL, params={**params, "jurisdiction": "ladbs", "cursor": cursor}, headers=pro),
        400,
        "invalid_cursor",
    )
    # another key's cursor
    other = new_key(server, "pro", addon=True)
    assert_problem(
        http.get(URL, params={**params, "cursor": cursor}, headers=other), 400, "invalid_cursor"
    )
    assert used(http, pro) == before
    assert used(http, other) == 0
    # the untouched cursor still works, and the page size may change
    second = http.get(URL, params={**params, "limit": 7, "cursor": cursor}, headers=pro)
    assert second.status_code == 200, second.text
    assert not set(keys_of(first.json()["results"])) & set(keys_of(second.json()["results"]))


# -- entitlement and metering -----------------------------------------------------------------


def test_meter_moves_by_exactly_one_per_200_and_not_on_400(
    http: httpx.Client, pro: dict[str, str]
) -> None:
    before = used(http, pro)
    first = http.get(URL, params={"permit_type": "Building", "limit": 3}, headers=pro)
    assert first.status_code == 200
    assert used(http, pro) == before + 1
    assert first.headers["x-ratelimit-limit"] == "1500"
    assert first.headers["x-ratelimit-remaining"] == str(1500 - before - 1)
    cursor = first.json()["pagination"]["next_cursor"]
    page = http.get(
        URL, params={"permit_type": "Building", "limit": 3, "cursor": cursor}, headers=pro
    )
    assert page.status_code == 200
    assert used(http, pro) == before + 2  # a page is a search
    for params, code in (
        ({}, "filter_required"),
        ({"limit": "5"}, "filter_required"),
        ({"contractor": "ACME"}, "unsupported_filter"),
        ({"lat": "34.1", "lon": "-118.2"}, "incomplete_radius"),
        ({"date_from": "2026-02-01", "date_to": "2026-01-01"}, "invalid_date_range"),
        ({"value_min": "10", "value_max": "5"}, "invalid_value_range"),
        ({"zip": "9001"}, "invalid_zip"),
    ):
        assert_problem(http.get(URL, params=params, headers=pro), 400, code)
    assert used(http, pro) == before + 2


def test_without_the_addon_five_free_searches_then_429(
    server: DevServer, http: httpx.Client
) -> None:
    # developer plan (burst 60/min) without the add-on: the free allowance applies
    key = new_key(server, "developer", addon=False)
    for n in range(5):
        ok = http.get(URL, params={"permit_type": "Building", "limit": 1}, headers=key)
        assert ok.status_code == 200, ok.text
        assert used(http, key) == n + 1
    refused = assert_problem(
        http.get(URL, params={"permit_type": "Building", "limit": 1}, headers=key),
        429,
        "rate_limit_exceeded",
    )
    assert "add-on" in str(refused["upgrade_hint"])
    assert used(http, key) == 5
    usage = http.get("/api/v1/usage", headers=key).json()["discovery"]
    assert (usage["limit"], usage["remaining"]) == (5, 0)


def test_sandbox_keys_are_refused(server: DevServer, http: httpx.Client) -> None:
    sandbox = {"X-API-Key": server.keys["pro"]["sandbox_key"]}
    assert_problem(
        http.get(URL, params={"permit_type": "Building"}, headers=sandbox),
        403,
        "sandbox_not_supported",
    )
    assert_problem(http.get(URL, params={"permit_type": "Building"}), 401, "invalid_api_key")
