"""Black-box acceptance of status lookups: a real `permitapi dev` server (in-process worker)
against the portal simulator it mounts at /_sim, driven only over HTTP. Every behaviour is
checked with the simulator's request counts and the key's usage meter."""

from __future__ import annotations

import json
import random
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import httpx
import pytest

from permitapi.portalsim.ladbs_data import quirks as ladbs_quirks
from tests.support.dev_server import DevServer

pytestmark = pytest.mark.slow
SIM = "/_sim/_control"


@pytest.fixture(scope="module")
def accounts(server: DevServer) -> dict[str, dict[str, str]]:
    """This module's own accounts (the dev server's ready-made keys are shared with other
    modules, and the free plan's burst window is 3 calls a minute)."""
    made = {}
    for plan in ("free", "pro", "enterprise"):
        created = server.cli("keys", "create", "--plan", plan, "--json")
        assert created.returncode == 0, created.stderr
        made[plan] = json.loads(created.stdout)
    return made


@pytest.fixture
def http(server: DevServer) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=server.base_url, timeout=60) as client:
        client.delete(f"{SIM}/faults")
        yield client
        client.delete(f"{SIM}/faults")


_FORMATS = {
    "ladbs": lambda d: f"{d[:5]}-{d[5:10]}-{d[10:15]}",
    "epicla": lambda d: f"CREB{d[:10]}",
    "aca:sandiego": lambda d: f"PMT-{d[:7]}",
}


def fresh_permit(http: httpx.Client, slug: str) -> str:
    """A new permit created in the simulator (the dev server is shared with other modules, so
    a listed permit may already be cached there). LADBS numbers with the simulator's "legacy"
    page layout are skipped: such pages publish no sections, so details a test adds through
    the control API could never be read back."""
    while True:
        digits = str(random.randrange(10**14, 10**15))
        number = _FORMATS[slug](digits)
        if slug != "ladbs" or not ladbs_quirks(number).legacy:
            break
    created = http.put(f"{SIM}/permits/{slug}/{number}", json={})
    assert created.status_code == 201, created.text
    return str(created.json()["permit_number"])


def used(http: httpx.Client, key: str) -> int:
    return int(http.get("/api/v1/usage", headers={"X-API-Key": key}).json()["lookup"]["used"])


def sim_requests(http: httpx.Client, slug: str) -> int:
    return int(http.get(f"{SIM}/stats").json()["requests"].get(slug, 0))


def status(http: httpx.Client, number: str, key: str, **params: Any) -> httpx.Response:
    return http.get(f"/api/v1/permits/{number}/status", params=params, headers={"X-API-Key": key})


def test_live_then_cached_with_meter(
    accounts: dict[str, dict[str, str]], http: httpx.Client
) -> None:
    key = accounts["pro"]["live_key"]
    number = fresh_permit(http, "ladbs")
    before, portal_before = used(http, key), sim_requests(http, "ladbs")
    live = status(http, number, key)
    assert live.status_code == 200, live.text
    assert live.json()["source"] == "live_scrape"
    assert live.json()["jurisdiction"] == "ladbs"
    assert set(live.json()["data_freshness"]) >= {"age_seconds", "next_refresh_at"}
    one_fetch = sim_requests(http, "ladbs") - portal_before
    assert one_fetch >= 1
    cached = status(http, number, key)
    assert cached.json()["source"] == "cached"
    assert sim_requests(http, "ladbs") - portal_before == one_fetch
    assert used(http, key) - before == 2
    assert cached.headers["X-RateLimit-Remaining"] == str(25_000 - used(http, key))


def jurisdiction_figures(http: httpx.Client, key: str, slug: str) -> dict[str, Any]:
    """What the service reports about one jurisdiction: stats, analytics, its directory entry
    and its coverage (none of these calls costs a credit)."""
    headers = {"X-API-Key": key}
    stats = http.get(f"/api/v1/jurisdictions/{slug}/stats", headers=headers)
    analytics = http.get(f"/api/v1/jurisdictions/{slug}/analytics", headers=headers)
    directory = http.get("/api/v1/jurisdictions", headers=headers)
    coverage = http.get("/api/v1/jurisdictions/coverage")
    for response in (stats, analytics, directory, coverage):
        assert response.status_code == 200, response.text
    (listed,) = [j for j in directory.json()["jurisdictions"] if j["slug"] == slug]
    (covered,) = [j for j in coverage.json()["jurisdictions"] if j["slug"] == slug]
    return {
        "stats": stats.json(),
        "analytics": analytics.json(),
        "listed": listed,
        "coverage": {f["field"]: f for f in covered["field_coverage"]},
        "observations": covered["data_release"]["sample_size"],
    }


# Resource fields and the coverage field each is recorded under.
_RESOURCE_FIELDS = {
    "status": ("status",),
    "permit_type": ("permit_type",),
    "address": ("address",),
    "work_description": ("work_description",),
    "valuation": ("valuation",),
    "applied_date": ("dates", "applied"),
    "issued_date": ("dates", "issued"),
    "finaled_date": ("dates", "finaled"),
    "expires_date": ("dates", "expires"),
    "status_date": ("dates", "status_date"),
}


def _field(resource: dict[str, Any], path: tuple[str, ...]) -> dict[str, Any]:
    for name in path:
        resource = resource[name]
    return resource


def test_lookups_feed_stats_analytics_coverage_and_the_stored_reads(
    accounts: dict[str, dict[str, str]], http: httpx.Client
) -> None:
    """Fresh simulator permits looked up through the service move the jurisdiction's stats,
    analytics, directory count and coverage by exactly what they contain, and the canonical
    resource, inspections, conditions and history read back what the lookup stored."""
    key = accounts["pro"]["live_key"]
    headers = {"X-API-Key": key}
    permit_type = f"Acceptance-{random.randrange(10**9)}"
    details = {
        "inspections": [
            {"type": "Foundation", "date": "1901-02-20", "result": "Approved",
             "inspector": "J. Ortiz"},
            {"type": "Framing", "date": "1901-02-27", "result": "Corrections Issued",
             "inspector": "K. Lee"},
        ],
        "pending_inspections": [{"type": "Drywall", "date": "1901-03-10"}],
        "conditions": [
            {"name": "Fire clearance", "status": "Required", "group": "Clearances"},
            {"name": "Soils report", "status": "Required"},
        ],
        "timeline": [
            {"status": "Submitted", "changed_at": "1901-01-01"},
            {"status": "Issued", "changed_at": "1901-02-15"},
        ],
    }  # fmt: skip
    changes = [
        {"applied_date": "1901-01-01", "issued_date": "1901-02-15", **details},
        {"applied_date": "1901-01-05", "issued_date": "1901-03-01"},
        {"applied_date": "1901-01-10", "issued_date": "1901-04-01", "finaled_date": "1901-06-01",
         "raw_status": "Permit Finaled",
         "timeline": [{"status": "Permit Finaled", "changed_at": "1901-06-01"}]},
    ]  # fmt: skip
    numbers = [fresh_permit(http, "ladbs") for _ in changes]
    truths = []
    for number, change in zip(numbers, changes, strict=True):
        updated = http.put(
            f"{SIM}/permits/ladbs/{number}", json={"permit_type": permit_type, **change}
        )
        assert updated.status_code == 200, updated.text
        truths.append(http.get(f"{SIM}/permits/ladbs/{number}").json())

    before, used_before = jurisdiction_figures(http, key, "ladbs"), used(http, key)
    records = [status(http, number, key).json() for number in numbers]
    assert [r["source"] for r in records] == ["live_scrape"] * 3, records
    assert [r["status_phase"] for r in records] == ["active", "active", "closed"]
    after = jurisdiction_figures(http, key, "ladbs")

    # Stats, the directory and analytics: two more active permits (the finaled one is not),
    # three more of the new type, three more processing intervals, the earliest date moved.
    active = before["stats"]["active_permits_count"] + 2
    assert after["stats"]["active_permits_count"] == active
    assert after["listed"]["active_permits_count"] == active
    assert before["listed"]["active_permits_count"] == before["stats"]["active_permits_count"]
    analytics, earlier = after["analytics"], before["analytics"]
    assert analytics["permit_count"] == earlier["permit_count"] + 3
    assert analytics["permits_by_type"][permit_type] == 3
    assert permit_type not in earlier["permits_by_type"]
    assert analytics["sample_size"] == earlier["sample_size"] + 3
    earliest = min(filter(None, [before["stats"]["date_range"]["earliest"], "1901-01-01"]))
    assert after["stats"]["date_range"]["earliest"] == earliest
    assert analytics["date_range"] == after["stats"]["date_range"]

    # The canonical resource of each permit: the simulator's values, and the coverage
    # observation each lookup recorded agrees with what the resource shows.
    assert after["observations"] == before["observations"] + 3
    present = dict.fromkeys([*_RESOURCE_FIELDS, "conditions"], 0)
    for record, truth in zip(records, truths, strict=True):
        resource = http.get(f"/api/v1/permits/{record['permit_id']}", headers=headers)
        assert resource.status_code == 200, resource.text
        body = resource.json()
        assert (body["permit_number"], body["jurisdiction"]) == (truth["permit_number"], "ladbs")
        assert body["status"]["raw_value"] == truth["raw_status"]
        for name in ("permit_type", "address", "work_description"):
            assert body[name]["value"] == truth[name], name
        for name in ("applied", "issued", "finaled"):
            assert body["dates"][name]["value"] == truth[f"{name}_date"], name
        assert body["conditions"]["count"] == len(truth["conditions"] or [])
        for name, path in _RESOURCE_FIELDS.items():
            present[name] += _field(body, path)["provenance"]["availability"] == "available"
        present["conditions"] += body["conditions"]["observed"]
    for name, count in present.items():
        field, earlier_field = after["coverage"][name], before["coverage"][name]
        assert field["sample_size"] == earlier_field["sample_size"] + 3, name
        assert field["records_present"] == earlier_field["records_present"] + count, name
    assert present["permit_type"] == present["applied_date"] == present["issued_date"] == 3
    assert present["finaled_date"] == 1

    # Inspections, conditions and history of the detailed permit, and the data_freshness of
    # every stored read: the status record's (a cached lookup of the same row).
    number, truth = numbers[0], truths[0]
    cached = status(http, number, key).json()
    assert cached["source"] == "cached"
    reads = {
        kind: http.get(f"/api/v1/permits/{number}/{kind}", headers=headers)
        for kind in ("inspections", "conditions", "history")
    }
    reads["resource"] = http.get(f"/api/v1/permits/{records[0]['permit_id']}", headers=headers)
    for kind, response in reads.items():
        assert response.status_code == 200, (kind, response.text)
        freshness = response.json()["data_freshness"]
        assert freshness["age_seconds"] >= cached["data_freshness"]["age_seconds"], kind
        assert {**freshness, "age_seconds": 0} == {**cached["data_freshness"], "age_seconds": 0}
    inspections = reads["inspections"].json()

    def key_of(item: dict[str, Any]) -> tuple[str, str | None]:
        return item["type"], item["date"]

    assert sorted(inspections["inspections"], key=key_of) == sorted(
        truth["inspections"], key=key_of
    )
    assert inspections["pending"] == truth["pending_inspections"]
    assert inspections["pass_rate"] == 0.5  # LADBS: Approved passes, Corrections Issued fails
    conditions = reads["conditions"].json()
    assert [(c["name"], c["status"], c["group"]) for c in conditions["items"]] == [
        (c["name"], c["status"], c["group"]) for c in truth["conditions"]
    ]
    assert conditions["summary"] == {"total": 2, "required": 2, "met": 0}
    history = reads["history"].json()
    assert [(e["status"], e["changed_at"]) for e in history["timeline"]] == [
        (e["status"], e["changed_at"]) for e in truth["timeline"]
    ]
    # Meter: 1 credit per status lookup (3 live, 1 cached) and per stored read (3 resources,
    # then the first permit's resource and 3 details); stats, analytics, the directory and
    # coverage cost nothing.
    assert used(http, key) - used_before == 4 + 7
    jurisdiction_figures(http, key, "ladbs")
    assert used(http, key) - used_before == 4 + 7


def test_fifty_concurrent_misses_make_one_fetch(
    accounts: dict[str, dict[str, str]],
    http: httpx.Client,
) -> None:
    key = accounts["enterprise"]["live_key"]
    # Requests one portal fetch of a LADBS permit makes (the adapter may read several pages).
    probe = fresh_permit(http, "ladbs")
    start = sim_requests(http, "ladbs")
    assert status(http, probe, key).status_code == 200
    per_fetch = sim_requests(http, "ladbs") - start

    number = fresh_permit(http, "ladbs")
    http.post(f"{SIM}/faults", json={"source": "ladbs", "mode": "slow", "latency_ms": 500})
    start = sim_requests(http, "ladbs")
    with ThreadPoolExecutor(max_workers=50) as pool:
        answers = list(pool.map(lambda _: status(http, number, key).status_code, range(50)))
    assert answers == [200] * 50
    assert sim_requests(http, "ladbs") - start == per_fetch


def test_portal_down_with_and_without_cache(
    accounts: dict[str, dict[str, str]],
    http: httpx.Client,
) -> None:
    key = accounts["pro"]["live_key"]
    cached_number, uncached_number = fresh_permit(http, "ladbs"), fresh_permit(http, "ladbs")
    assert status(http, cached_number, key).status_code == 200
    http.post(f"{SIM}/faults", json={"source": "ladbs", "mode": "down"})
    before = used(http, key)
    stale = status(http, cached_number, key, force_refresh="true")
    assert stale.status_code == 200, stale.text
    assert stale.json()["source"] == "stale_cache"
    assert stale.json()["data_freshness"]["is_stale"] is True
    assert stale.json()["data_freshness"]["stale_reason"].startswith("source_")
    assert used(http, key) - before == 10
    down = status(http, uncached_number, key)
    assert down.status_code == 503
    assert down.json()["code"] == "jurisdiction_unavailable"
    assert int(down.headers["Retry-After"]) > 0
    assert used(http, key) - before == 10  # the 503 gave its credit back


def test_missing_permit_and_unsupported_numbers(
    accounts: dict[str, dict[str, str]],
    http: httpx.Client,
) -> None:
    key = accounts["pro"]["live_key"]
    # EPIC-LA: the outage test above may have left LADBS's circuit breaker open.
    number = fresh_permit(http, "epicla")
    assert http.delete(f"{SIM}/permits/epicla/{number}").status_code < 300
    before = used(http, key)
    missing = status(http, number, key)
    assert missing.status_code == 404, missing.text
    assert missing.json()["code"] == "permit_not_found"
    unsupported = status(http, "not-a-permit", key)
    assert unsupported.json()["code"] == "jurisdiction_not_supported"
    assert used(http, key) - before == 2


def test_browser_backed_lookup_becomes_an_operation(
    accounts: dict[str, dict[str, str]],
    http: httpx.Client,
) -> None:
    owner = accounts["free"]["live_key"]
    number = fresh_permit(http, "aca:sandiego")
    before = used(http, owner)
    accepted = status(http, number, owner, jurisdiction="aca:sandiego")
    assert accepted.status_code == 202, accepted.text
    assert accepted.headers["Retry-After"] == "2"
    assert "Preference-Applied" not in accepted.headers
    location = accepted.headers["Location"]
    other = accounts["pro"]["live_key"]
    assert http.get(location, headers={"X-API-Key": other}).status_code == 404
    deadline = time.monotonic() + 60
    while True:
        polled = http.get(location, headers={"X-API-Key": owner}).json()
        if polled["status"] in ("succeeded", "failed"):
            break
        assert time.monotonic() < deadline, polled
        time.sleep(0.5)
    assert polled["status"] == "succeeded", polled
    assert polled["result"]["jurisdiction"] == "aca:sandiego"
    assert polled["result"]["source"] == "live_scrape"
    assert used(http, owner) - before == 1
    remembered = status(http, number, owner)
    assert remembered.status_code == 200
    assert remembered.json()["source"] == "cached"


def test_accela_inspections_arrive_through_the_record_pages_postback(
    accounts: dict[str, dict[str, str]], http: httpx.Client
) -> None:
    """Dev mode end to end: the simulator serves the record page with an empty inspection
    panel, the adapter replays the page's UpdatePanel postback (and the completed grid's
    "Next >" postback: seven inspections are two pages of five), and the inspections endpoint
    returns what the portal holds."""
    owner = accounts["enterprise"]["live_key"]
    number = fresh_permit(http, "aca:sandiego")
    inspections = [
        {"type": f"BLD-Framing {n}", "date": f"2026-0{n + 1}-1{n}", "result": "Approved",
         "inspector": "K. Nguyen"}
        for n in range(6)
    ]  # fmt: skip
    inspections.insert(
        0,
        {
            "type": "PLB-Final",
            "date": "2026-09-14",
            "result": "Approved",
            "inspector": "M. Delgado",
        },
    )
    changed = http.put(
        f"{SIM}/permits/aca:sandiego/{number}",
        json={"raw_status": "Issued", "inspections": inspections, "pending_inspections": []},
    )
    assert changed.status_code == 200, changed.text
    before = sim_requests(http, "aca:sandiego")
    accepted = status(http, number, owner, jurisdiction="aca:sandiego")
    assert accepted.status_code == 202, accepted.text
    deadline = time.monotonic() + 60
    while True:
        polled = http.get(accepted.headers["Location"], headers={"X-API-Key": owner}).json()
        if polled["status"] in ("succeeded", "failed"):
            break
        assert time.monotonic() < deadline, polled
        time.sleep(0.5)
    assert polled["status"] == "succeeded", polled
    # CapHome, search, CapDetail (redirect), CapDetail, GetProcessingData, 2 inspection postbacks
    assert sim_requests(http, "aca:sandiego") - before == 7
    body = http.get(
        f"/api/v1/permits/{number}/inspections",
        params={"jurisdiction": "aca:sandiego"},
        headers={"X-API-Key": owner},
    ).json()
    assert body["observed"] is True
    got = body["inspections"]
    assert len(got) == 7
    assert got[0]["type"] == "PLB-Final"
    assert got[0]["date"] == "2026-09-14"
    assert got[0]["result"] == "Approved"
    assert got[0]["inspector"] == "M. Delgado"


def test_sandbox_and_batch(accounts: dict[str, dict[str, str]], http: httpx.Client) -> None:
    sandbox = accounts["free"]["sandbox_key"]
    demo = status(http, "21030-20000-00256", sandbox)
    assert demo.status_code == 200
    assert demo.headers["X-Sandbox-Mode"] == "true"
    key = accounts["pro"]["live_key"]
    numbers = [fresh_permit(http, "epicla"), fresh_permit(http, "epicla"), "nope"]
    before = used(http, key)
    batch = http.post(
        "/api/v1/permits/batch-status", json={"permit_numbers": numbers}, headers={"X-API-Key": key}
    )
    assert batch.status_code == 200
    body = batch.json()
    assert [r["source"] for r in body["results"]] == ["live_scrape", "live_scrape"]
    assert [e["error"] for e in body["errors"]] == ["jurisdiction_not_supported"]
    assert used(http, key) - before == 3


def test_key_deactivated_by_the_cli_stops_cached_lookups_at_once(
    server: DevServer, http: httpx.Client
) -> None:
    created = server.cli("keys", "create", "--plan", "developer", "--json")
    assert created.returncode == 0, created.stderr
    key = json.loads(created.stdout)["live_key"]
    # EPIC-LA: the outage test above may have left LADBS's circuit breaker open.
    number = fresh_permit(http, "epicla")
    looked_up = status(http, number, key)
    assert looked_up.status_code == 200, looked_up.text  # the server now caches this key
    deactivated = server.cli("keys", "deactivate", key)
    assert deactivated.returncode == 0, deactivated.stderr
    refused = status(http, number, key)
    assert refused.status_code == 401
    assert refused.json()["code"] == "invalid_api_key"
    batch = http.post(
        "/api/v1/permits/batch-status",
        json={"permit_numbers": [number]},
        headers={"X-API-Key": key},
    )
    assert batch.status_code == 401
