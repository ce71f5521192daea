"""The simulator core: generation, control API, and every generic fault through PortalHttp."""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Iterator
from datetime import date
from urllib.parse import urlsplit

import httpx
import pytest
from starlette.applications import Starlette

from permitapi.portalsim.app import create_sim_app
from permitapi.sources.base import Blocked, NotFoundAtSource, RetryLater
from permitapi.sources.http import PortalHttp
from permitapi.sources.http_policy import SourcePolicy
from permitapi.sources.registry import default_directory
from tests.sources.core.support import ECHO_FAMILIES, EchoAdapter, LoopbackServer

TODAY = date(2026, 11, 22)
DIRECTORY = default_directory()


def make_sim() -> Starlette:
    return create_sim_app(
        DIRECTORY,
        seed=7,
        permits_per_jurisdiction=25,
        latency_ms=0,
        today=TODAY,
        families=ECHO_FAMILIES,
    )


@pytest.fixture
async def control() -> AsyncIterator[httpx.AsyncClient]:
    transport = httpx.ASGITransport(app=make_sim())
    async with httpx.AsyncClient(transport=transport, base_url="http://sim") as client:
        yield client


def test_generation_is_deterministic_and_sized() -> None:
    first, second = make_sim().state.store, make_sim().state.store
    assert [p.permit_number for p in first.of("ladbs")] == [
        p.permit_number for p in second.of("ladbs")
    ]
    assert len(first.of("ladbs")) == 25
    other_seed = create_sim_app(
        DIRECTORY, seed=8, permits_per_jurisdiction=25, families=ECHO_FAMILIES
    )
    assert [p.permit_number for p in other_seed.state.store.of("ladbs")] != [
        p.permit_number for p in first.of("ladbs")
    ]


def test_missing_families_are_skipped_not_fatal() -> None:
    sim = create_sim_app(
        DIRECTORY, families={**ECHO_FAMILIES, "aca": "permitapi.portalsim.nope:Nope"}
    )
    assert "aca" in sim.state.skipped_families
    assert sim.state.store.of("ladbs")


def test_a_broken_family_import_is_not_hidden() -> None:
    with pytest.raises(ModuleNotFoundError):
        create_sim_app(DIRECTORY, families={"ladbs": "tests.portalsim.core.broken_family:Broken"})


async def test_list_get_put_delete(control: httpx.AsyncClient) -> None:
    listed = (await control.get("/_control/permits", params={"source": "ladbs", "limit": 3})).json()
    assert len(listed["permits"]) == 3
    first = listed["permits"][0]
    assert first["jurisdiction"] == "ladbs"
    assert first["status"] in ("Issued", "Permit Finaled")

    number = first["permit_number"]
    truth = (await control.get(f"/_control/permits/ladbs/{number}")).json()
    assert truth["permit_number"] == number
    assert truth["raw_status"] == first["status"]

    changed = await control.put(
        f"/_control/permits/ladbs/{number}",
        json={
            "status": "Permit Finaled",
            "inspections": [{"type": "Final", "date": "2026-11-01", "result": "Pass"}],
        },
    )
    assert changed.status_code == 200
    body = changed.json()
    assert body["raw_status"] == "Permit Finaled"
    assert body["status"] == "finaled"
    assert body["inspections"] == [
        {"type": "Final", "date": "2026-11-01", "result": "Pass", "inspector": None}
    ]

    created = await control.put("/_control/permits/ladbs/99999 99999 1", json={})
    assert created.status_code == 201
    assert created.json()["permit_number"] == "99999-99999-00001"
    assert created.json()["status"] == "issued"

    assert (await control.delete(f"/_control/permits/ladbs/{number}")).status_code == 200
    assert (await control.get(f"/_control/permits/ladbs/{number}")).status_code == 404
    assert (await control.delete(f"/_control/permits/ladbs/{number}")).status_code == 404


async def test_slugs_with_colons_raw_and_percent_encoded(control: httpx.AsyncClient) -> None:
    raw = await control.put("/_control/permits/aca:sandiego/COM-1234567", json={"status": "Issued"})
    assert raw.status_code == 201, raw.text
    encoded = await control.get("/_control/permits/aca%3Asandiego/COM-1234567")
    assert encoded.status_code == 200
    assert encoded.json()["jurisdiction"] == "aca:sandiego"
    listed = await control.get("/_control/permits", params={"source": "aca:sandiego"})
    assert [p["permit_number"] for p in listed.json()["permits"]] == ["COM-1234567"]


@pytest.mark.parametrize(
    ("method", "path", "body"),
    [
        ("GET", "/_control/permits?limit=0", None),
        ("GET", "/_control/permits?limit=abc", None),
        ("GET", "/_control/permits?source=nowhere", None),
        ("PUT", "/_control/permits/ladbs/11111-11111-11111", {"colour": "red"}),
        ("PUT", "/_control/permits/ladbs/11111-11111-11111", {"applied_date": "yesterday"}),
        ("PUT", "/_control/permits/ladbs/11111-11111-11111", {"inspections": "many"}),
        ("PUT", "/_control/permits/ladbs/11111-11111-11111", {"unavailable": "timeline"}),
        ("PUT", "/_control/permits/ladbs/11111-11111-11111", {"jurisdiction": "epicla"}),
        ("PUT", "/_control/permits/ladbs/11111-11111-11111", {"normalized_status": "great"}),
        ("PUT", "/_control/permits/ladbs/11111-11111-11111", [1, 2]),
        ("POST", "/_control/faults", {"source": "ladbs", "mode": "explode"}),
        ("POST", "/_control/faults", {"source": "nowhere", "mode": "down"}),
        ("POST", "/_control/faults", {"source": "*", "mode": "slow", "latency_ms": -1}),
        ("POST", "/_control/faults", {"source": "*", "mode": "down", "count": 0}),
        ("POST", "/_control/faults", {"source": "*", "mode": "down", "extra": 1}),
    ],
)
async def test_bad_control_input_is_a_400(
    control: httpx.AsyncClient, method: str, path: str, body: object
) -> None:
    response = await control.request(method, path, json=body)
    assert response.status_code == 400, response.text
    assert response.json()["error"]


async def test_a_permit_read_from_the_control_api_can_be_put_back(
    control: httpx.AsyncClient,
) -> None:
    created = await control.put("/_control/permits/aca:sandiego/COM-7654321", json={})
    assert created.status_code == 201, created.text
    body = created.json()
    assert body["unavailable"] == {}
    changeable = {k: v for k, v in body.items() if k in ("unavailable", "field_sources", "parcel")}
    again = await control.put("/_control/permits/aca:sandiego/COM-7654321", json=changeable)
    assert again.status_code == 200, again.text


async def test_bad_json_body_is_a_400(control: httpx.AsyncClient) -> None:
    response = await control.put("/_control/permits/ladbs/1-1-1", content=b"{nope")
    assert response.status_code == 400


@pytest.fixture(scope="module")
def sim_server() -> Iterator[tuple[LoopbackServer, Starlette]]:
    sim = make_sim()
    with LoopbackServer(sim) as server:
        yield server, sim


@pytest.fixture
async def adapter(sim_server: tuple[LoopbackServer, Starlette]) -> AsyncIterator[EchoAdapter]:
    server, sim = sim_server
    sim.state.store.clear_faults()
    sim.state.store.reset_stats()

    async def no_sleep(_: float) -> None:
        return None

    http = PortalHttp(
        portal_base_url=server.url,
        default_policy=SourcePolicy(
            read_timeout=0.3, max_attempts=2, circuit_failure_threshold=100
        ),
        sleep=no_sleep,
    )
    yield EchoAdapter(http)
    await http.aclose()
    sim.state.store.clear_faults()


async def add_fault(server: LoopbackServer, **fault: object) -> None:
    async with httpx.AsyncClient(base_url=server.url) as client:
        response = await client.post("/_control/faults", json=fault)
        assert response.status_code == 201, response.text


async def stats(server: LoopbackServer) -> dict[str, int]:
    async with httpx.AsyncClient(base_url=server.url) as client:
        counts: dict[str, int] = (await client.get("/_control/stats")).json()["requests"]
        return counts


@pytest.mark.parametrize(
    ("mode", "latency_ms", "reason", "requests"),
    [
        ("down", 0, "down", 2),
        ("timeout", 1000, "timeout", 2),
        ("error", 0, "server_error", 2),
        # The maintenance page asks for Retry-After: 120, too long to wait in-request.
        ("maintenance", 0, "maintenance", 1),
    ],
)
async def test_fault_modes_become_retry_later(
    sim_server: tuple[LoopbackServer, Starlette],
    adapter: EchoAdapter,
    mode: str,
    latency_ms: int,
    reason: str,
    requests: int,
) -> None:
    server, sim = sim_server
    ladbs = DIRECTORY.get("ladbs")
    assert ladbs is not None
    number = sim.state.store.of("ladbs")[0].permit_number
    await add_fault(server, source="ladbs", mode=mode, latency_ms=latency_ms, count=None)
    with pytest.raises(RetryLater) as caught:
        await adapter.fetch_permit(ladbs, number)
    assert caught.value.reason == reason
    assert (await stats(server))["ladbs"] == requests


async def test_blocked_fault_is_blocked(
    sim_server: tuple[LoopbackServer, Starlette], adapter: EchoAdapter
) -> None:
    server, sim = sim_server
    ladbs = DIRECTORY.get("ladbs")
    assert ladbs is not None
    await add_fault(server, source="*", mode="blocked")
    with pytest.raises(Blocked):
        await adapter.fetch_permit(ladbs, sim.state.store.of("ladbs")[0].permit_number)


async def test_slow_fault_answers_late_but_correctly(
    sim_server: tuple[LoopbackServer, Starlette], adapter: EchoAdapter
) -> None:
    server, sim = sim_server
    ladbs = DIRECTORY.get("ladbs")
    assert ladbs is not None
    permit = sim.state.store.of("ladbs")[0]
    await add_fault(server, source="ladbs", mode="slow", latency_ms=100)
    snapshot = await adapter.fetch_permit(ladbs, permit.permit_number)
    assert snapshot.raw_status == permit.raw_status


async def test_counted_fault_is_used_up_and_cleared_fault_is_gone(
    sim_server: tuple[LoopbackServer, Starlette], adapter: EchoAdapter
) -> None:
    server, sim = sim_server
    ladbs = DIRECTORY.get("ladbs")
    assert ladbs is not None
    number = sim.state.store.of("ladbs")[0].permit_number
    await add_fault(server, source="ladbs", mode="error", count=1)
    snapshot = await adapter.fetch_permit(ladbs, number)  # first attempt 500, retry succeeds
    assert snapshot.permit_number == number
    await add_fault(server, source="ladbs", mode="down")
    async with httpx.AsyncClient(base_url=server.url) as client:
        assert (await client.delete("/_control/faults")).status_code == 200
        assert (await client.post("/_control/stats/reset")).json() == {"requests": {}}
    await adapter.fetch_permit(ladbs, number)
    assert await stats(server) == {"ladbs": 1}


async def test_deleted_permit_is_not_found(
    sim_server: tuple[LoopbackServer, Starlette], adapter: EchoAdapter
) -> None:
    server, _ = sim_server
    ladbs = DIRECTORY.get("ladbs")
    assert ladbs is not None
    async with httpx.AsyncClient(base_url=server.url) as client:
        await client.put("/_control/permits/ladbs/12345-12345-12345", json={"status": "Issued"})
        assert (await client.delete("/_control/permits/ladbs/12345-12345-12345")).status_code == 200
    with pytest.raises(NotFoundAtSource):
        await adapter.fetch_permit(ladbs, "12345-12345-12345")


async def test_arrivals_are_recorded_by_real_host_and_reset_with_the_stats(
    sim_server: tuple[LoopbackServer, Starlette], adapter: EchoAdapter
) -> None:
    server, sim = sim_server
    ladbs = DIRECTORY.get("ladbs")
    assert ladbs is not None
    number = sim.state.store.of("ladbs")[0].permit_number
    async with httpx.AsyncClient(base_url=server.url) as client:
        await client.post("/_control/stats/reset")
        before = time.time()
        await adapter.fetch_permit(ladbs, number)
        await adapter.fetch_permit(ladbs, number)
        arrivals = (await client.get("/_control/arrivals")).json()["arrivals"]
        urls = [ladbs.portal_base_url, *ladbs.endpoints.values()]
        assert set(arrivals) <= {urlsplit(url).netloc.lower() for url in urls}
        moments = [moment for times in arrivals.values() for moment in times]
        assert len(moments) == (await stats(server))["ladbs"] >= 2
        assert all(before <= moment <= time.time() for moment in moments)
        await client.post("/_control/stats/reset")
        assert (await client.get("/_control/arrivals")).json() == {"arrivals": {}}
