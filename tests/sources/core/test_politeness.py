"""Per-host politeness in PortalHttp against a real loopback server: the token bucket (burst,
then a sustained rate, first come first served), the in-flight cap alongside it, and the
shipped policies with their overrides."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator

import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import PlainTextResponse, Response
from starlette.routing import Route

from permitapi.config import Settings
from permitapi.sources.http import PortalHttp
from permitapi.sources.http_policy import SourcePolicy
from permitapi.sources.policies import build_policies
from permitapi.sources.registry import default_directory
from tests.sources.core.support import LoopbackServer

HOSTS = ("portal.example.gov", "data.example.gov")
# (key, monotonic arrival time) of every request, in arrival order; the server runs in a
# thread of this process, so its clock is the test's.
arrivals: list[tuple[str, float]] = []
in_flight = {"now": 0, "max": 0}


async def arrive(request: Request) -> Response:
    arrivals.append((request.query_params["key"], time.monotonic()))
    in_flight["now"] += 1
    in_flight["max"] = max(in_flight["max"], in_flight["now"])
    await asyncio.sleep(float(request.query_params.get("hold", "0")))
    in_flight["now"] -= 1
    return PlainTextResponse("ok")


app = Starlette(routes=[Route(f"/{host}/arrive", arrive) for host in HOSTS])


@pytest.fixture(scope="module")
def server() -> Iterator[LoopbackServer]:
    with LoopbackServer(app) as running:
        yield running


@pytest.fixture(autouse=True)
def fresh_counts() -> None:
    arrivals.clear()
    in_flight.update(now=0, max=0)


def client(
    server: LoopbackServer, *, max_concurrency: int, burst: int, requests_per_second: float
) -> PortalHttp:
    policy = SourcePolicy(
        max_concurrency=max_concurrency, burst=burst, requests_per_second=requests_per_second
    )
    return PortalHttp(portal_base_url=server.url, default_policy=policy)


async def get(http: PortalHttp, key: str, host: str = HOSTS[0], hold: float = 0.0) -> None:
    params = {"key": key, "hold": str(hold)}
    await http.request("src", "GET", f"https://{host}/arrive", params=params)


def arrived_at(key: str) -> float:
    return next(moment for k, moment in arrivals if k == key)


async def test_a_burst_starts_at_once_then_starts_are_paced_at_the_rate(
    server: LoopbackServer,
) -> None:
    http = client(server, max_concurrency=10, burst=3, requests_per_second=5)
    try:
        started = time.monotonic()
        await asyncio.gather(*(get(http, f"r{i}") for i in range(5)))
    finally:
        await http.aclose()
    # Three tokens at once; then one every 0.2 s: the 4th start cannot come before 0.2 s, the
    # 5th before 0.4 s.
    assert all(arrived_at(f"r{i}") - started < 0.15 for i in range(3))
    paced = sorted(arrived_at(f"r{i}") - started for i in (3, 4))
    assert paced[0] >= 0.19
    assert paced[1] >= 0.39


async def test_the_bucket_refills_while_idle(server: LoopbackServer) -> None:
    http = client(server, max_concurrency=10, burst=2, requests_per_second=10)
    try:
        await asyncio.gather(get(http, "a0"), get(http, "a1"))
        await asyncio.sleep(0.25)  # two tokens back (0.2 s at 10/s)
        started = time.monotonic()
        await asyncio.gather(get(http, "b0"), get(http, "b1"))
    finally:
        await http.aclose()
    assert arrived_at("b0") - started < 0.08
    assert arrived_at("b1") - started < 0.08


async def test_waiters_start_first_come_first_served(server: LoopbackServer) -> None:
    http = client(server, max_concurrency=10, burst=1, requests_per_second=10)
    try:
        waiting = []
        for i in range(4):  # w0 starts at once, w1..w3 queue up for 0.1, 0.2, 0.3 s
            waiting.append(asyncio.ensure_future(get(http, f"w{i}")))
            await asyncio.sleep(0.01)
        # A newcomer arriving just before w3's token is due must not take it.
        await asyncio.sleep(0.27)
        late = asyncio.ensure_future(get(http, "late"))
        await asyncio.gather(*waiting, late)
    finally:
        await http.aclose()
    assert [key for key, _ in arrivals] == ["w0", "w1", "w2", "w3", "late"]


async def test_max_concurrency_still_caps_requests_in_flight(server: LoopbackServer) -> None:
    http = client(server, max_concurrency=2, burst=10, requests_per_second=100)
    try:
        await asyncio.gather(*(get(http, f"c{i}", hold=0.05) for i in range(6)))
    finally:
        await http.aclose()
    assert in_flight["max"] == 2


async def test_each_host_has_its_own_bucket(server: LoopbackServer) -> None:
    http = client(server, max_concurrency=10, burst=1, requests_per_second=2)
    try:
        started = time.monotonic()
        await asyncio.gather(get(http, "h0", HOSTS[0]), get(http, "h1", HOSTS[1]))
    finally:
        await http.aclose()
    assert arrived_at("h0") - started < 0.2
    assert arrived_at("h1") - started < 0.2


def test_shipped_policies_give_ladbs_a_token_bucket_and_others_the_defaults() -> None:
    policies = build_policies(Settings(source_policies={}), default_directory())
    ladbs = policies["ladbs"]
    assert (ladbs.max_concurrency, ladbs.burst, ladbs.requests_per_second) == (25, 25, 5.0)
    for slug in ("epicla", "aca:sandiego"):
        assert policies[slug].max_concurrency == SourcePolicy().max_concurrency
        assert policies[slug].requests_per_second == 0


def test_overrides_layer_over_the_shipped_platform_defaults() -> None:
    overrides = {
        "ladbs": {"burst": 10.0, "requests_per_second": 2.5},
        "aca": {"max_concurrency": 2.0, "burst": 3.0, "requests_per_second": 1.0},
        "aca:sandiego": {"burst": 1.0},
    }
    policies = build_policies(Settings(source_policies=overrides), default_directory())
    ladbs = policies["ladbs"]
    assert (ladbs.max_concurrency, ladbs.burst, ladbs.requests_per_second) == (25, 10, 2.5)
    assert isinstance(ladbs.burst, int)
    assert (policies["aca:anaheim"].burst, policies["aca:sandiego"].burst) == (3, 1)
    assert policies["aca:sandiego"].max_concurrency == 2


@pytest.mark.parametrize(
    "bad", [{"burst": 0.0}, {"requests_per_second": -1.0}, {"max_concurrency": 0.0}]
)
def test_impossible_politeness_is_refused(bad: dict[str, float]) -> None:
    with pytest.raises(ValueError, match="source policy"):
        build_policies(Settings(source_policies={"ladbs": bad}), default_directory())
