"""PortalHttp against a real loopback server: retries, circuit, host cap, size cap, errors."""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import AsyncIterator, Iterator

import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import PlainTextResponse, RedirectResponse, Response
from starlette.routing import Route

from permitapi.kit.retry_after import parse_retry_after
from permitapi.sources.base import Blocked, PortalChanged, RetryLater
from permitapi.sources.circuit import CircuitState
from permitapi.sources.http import USER_AGENT, PortalHttp
from permitapi.sources.http_policy import SourcePolicy
from tests.sources.core.support import LoopbackServer

HOST = "portal.example.gov"
hits: Counter[str] = Counter()
in_flight = {"now": 0, "max": 0}


async def flaky(request: Request) -> Response:
    """Fails `fail` times with `code` (per `key`), then answers 200."""
    key = request.query_params["key"]
    hits[key] += 1
    if hits[key] <= int(request.query_params.get("fail", "0")):
        headers = {}
        if "retry_after" in request.query_params:
            headers["Retry-After"] = request.query_params["retry_after"]
        return PlainTextResponse("nope", int(request.query_params["code"]), headers=headers)
    return PlainTextResponse(f"ok after {hits[key]}; ua={request.headers['user-agent']}")


async def sleepy(request: Request) -> Response:
    hits[request.query_params["key"]] += 1
    await asyncio.sleep(float(request.query_params["seconds"]))
    return PlainTextResponse("late")


async def big(request: Request) -> Response:
    return PlainTextResponse("x" * int(request.query_params["bytes"]))


async def gated(request: Request) -> Response:
    in_flight["now"] += 1
    in_flight["max"] = max(in_flight["max"], in_flight["now"])
    await asyncio.sleep(0.05)
    in_flight["now"] -= 1
    return PlainTextResponse("ok")


async def to_login(request: Request) -> Response:
    return RedirectResponse("/AGENCY/Login.aspx?ReturnUrl=%2fCap%2fCapHome.aspx", 302)


async def to_error(request: Request) -> Response:
    return RedirectResponse("/AGENCY/Error.aspx?ErrorId=abc", 302)


async def maintenance(request: Request) -> Response:
    hits["maintenance"] += 1
    return PlainTextResponse("<p>Service not available at this time</p>", 503)


async def post_fail(request: Request) -> Response:
    hits[request.query_params["key"]] += 1
    return PlainTextResponse("boom", 503)


async def wall_403(request: Request) -> Response:
    return PlainTextResponse('<div class="g-recaptcha" data-sitekey="x"></div>', 403)


app = Starlette(
    routes=[
        Route(f"/{HOST}/flaky", flaky),
        Route(f"/{HOST}/sleepy", sleepy),
        Route(f"/{HOST}/big", big),
        Route(f"/{HOST}/gated", gated),
        Route(f"/{HOST}/login", to_login),
        Route(f"/{HOST}/error", to_error),
        Route(f"/{HOST}/maintenance", maintenance),
        Route(f"/{HOST}/post", post_fail, methods=["POST"]),
        Route(f"/{HOST}/wall", wall_403),
    ]
)
FAST = SourcePolicy(
    connect_timeout=1.0,
    read_timeout=0.3,
    max_attempts=3,
    backoff_base_seconds=0.001,
    backoff_max_seconds=0.002,
    circuit_failure_threshold=100,
)


@pytest.fixture(scope="module")
def server() -> Iterator[LoopbackServer]:
    with LoopbackServer(app) as running:
        yield running


class RecordingSleep:
    def __init__(self) -> None:
        self.waits: list[float] = []

    async def __call__(self, seconds: float) -> None:
        self.waits.append(seconds)


@pytest.fixture
def sleeps() -> RecordingSleep:
    return RecordingSleep()


@pytest.fixture
async def http(server: LoopbackServer, sleeps: RecordingSleep) -> AsyncIterator[PortalHttp]:
    client = PortalHttp(portal_base_url=server.url, default_policy=FAST, sleep=sleeps)
    yield client
    await client.aclose()


def url(path: str) -> str:
    return f"https://{HOST}/{path}"


async def test_get_is_retried_until_it_succeeds(http: PortalHttp, sleeps: RecordingSleep) -> None:
    response = await http.request(
        "src", "GET", url("flaky"), params={"key": "a", "fail": 2, "code": 503}
    )
    assert response.status_code == 200
    assert hits["a"] == 3
    assert len(sleeps.waits) == 2
    assert USER_AGENT in response.text  # an honest User-Agent reaches the portal


async def test_retries_are_bounded_and_end_in_retry_later(http: PortalHttp) -> None:
    with pytest.raises(RetryLater) as caught:
        await http.request("src", "GET", url("flaky"), params={"key": "b", "fail": 9, "code": 502})
    assert hits["b"] == FAST.max_attempts
    assert caught.value.reason == "down"


async def test_500_is_server_error(http: PortalHttp) -> None:
    with pytest.raises(RetryLater) as caught:
        await http.request("src", "GET", url("flaky"), params={"key": "c", "fail": 9, "code": 500})
    assert caught.value.reason == "server_error"


async def test_post_is_not_retried_unless_marked_idempotent(http: PortalHttp) -> None:
    with pytest.raises(RetryLater):
        await http.request("src", "POST", url("post"), params={"key": "p1"})
    assert hits["p1"] == 1
    with pytest.raises(RetryLater):
        await http.request("src", "POST", url("post"), params={"key": "p2"}, idempotent=True)
    assert hits["p2"] == FAST.max_attempts


async def test_retry_after_is_the_minimum_wait(http: PortalHttp, sleeps: RecordingSleep) -> None:
    response = await http.request(
        "src", "GET", url("flaky"), params={"key": "ra", "fail": 1, "code": 429, "retry_after": 2}
    )
    assert response.status_code == 200
    assert sleeps.waits == [2.0]


async def test_long_retry_after_is_not_slept_but_reported(
    http: PortalHttp, sleeps: RecordingSleep
) -> None:
    with pytest.raises(RetryLater) as caught:
        await http.request(
            "src",
            "GET",
            url("flaky"),
            params={"key": "ra2", "fail": 5, "code": 429, "retry_after": 120},
        )
    assert hits["ra2"] == 1
    assert sleeps.waits == []
    assert caught.value.reason == "throttled"
    assert caught.value.retry_after == 120.0


async def test_403_throttle_is_not_retried(http: PortalHttp) -> None:
    with pytest.raises(RetryLater) as caught:
        await http.request(
            "src", "GET", url("flaky"), params={"key": "t403", "fail": 5, "code": 403}
        )
    assert hits["t403"] == 1
    assert caught.value.reason == "throttled"


async def test_403_captcha_wall_is_blocked(http: PortalHttp) -> None:
    with pytest.raises(Blocked):
        await http.request("src", "GET", url("wall"))


async def test_read_timeout_is_retry_later_timeout(http: PortalHttp) -> None:
    with pytest.raises(RetryLater) as caught:
        await http.request("src", "GET", url("sleepy"), params={"key": "slow", "seconds": 1.0})
    assert caught.value.reason == "timeout"
    assert hits["slow"] == FAST.max_attempts


async def test_connection_refused_is_retry_later_down(sleeps: RecordingSleep) -> None:
    with LoopbackServer(app) as short_lived:
        dead_base = short_lived.url
    client = PortalHttp(portal_base_url=dead_base, default_policy=FAST, sleep=sleeps)
    try:
        with pytest.raises(RetryLater) as caught:
            await client.request("src", "GET", url("flaky"), params={"key": "dead"})
        assert caught.value.reason == "down"
    finally:
        await client.aclose()


async def test_response_size_cap(server: LoopbackServer, sleeps: RecordingSleep) -> None:
    policy = SourcePolicy(max_response_bytes=1000)
    client = PortalHttp(portal_base_url=server.url, default_policy=policy, sleep=sleeps)
    try:
        assert (
            await client.request("src", "GET", url("big"), params={"bytes": 1000})
        ).text == "x" * 1000
        with pytest.raises(PortalChanged):
            await client.request("src", "GET", url("big"), params={"bytes": 1001})
    finally:
        await client.aclose()


async def test_login_redirect_is_blocked_and_error_redirect_retry_later(http: PortalHttp) -> None:
    with pytest.raises(Blocked):
        await http.request("src", "GET", url("login"))
    with pytest.raises(RetryLater) as caught:
        await http.request("src", "GET", url("error"))
    assert caught.value.reason == "portal_error"


async def test_maintenance_page_on_503_is_maintenance(http: PortalHttp) -> None:
    with pytest.raises(RetryLater) as caught:
        await http.request("src", "GET", url("maintenance"))
    assert caught.value.reason == "maintenance"


async def test_per_host_concurrency_cap(server: LoopbackServer, sleeps: RecordingSleep) -> None:
    in_flight["max"] = 0
    client = PortalHttp(
        portal_base_url=server.url, default_policy=SourcePolicy(max_concurrency=2), sleep=sleeps
    )
    try:
        # Two sources on one host share the host's budget.
        await asyncio.gather(
            *(client.request(f"src{i % 2}", "GET", url("gated")) for i in range(8))
        )
    finally:
        await client.aclose()
    assert in_flight["max"] == 2


async def test_min_interval_spaces_requests(server: LoopbackServer, sleeps: RecordingSleep) -> None:
    client = PortalHttp(
        portal_base_url=server.url,
        default_policy=SourcePolicy(min_interval_seconds=0.1, max_concurrency=4),
        sleep=sleeps,
    )
    loop = asyncio.get_running_loop()
    try:
        started = loop.time()
        await asyncio.gather(
            *(
                client.request("src", "GET", url("flaky"), params={"key": f"mi{i}"})
                for i in range(4)
            )
        )
        assert loop.time() - started >= 0.3
    finally:
        await client.aclose()


class FakeMonotonic:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


async def test_circuit_opens_half_opens_and_closes(
    server: LoopbackServer, sleeps: RecordingSleep
) -> None:
    clock = FakeMonotonic()
    policy = SourcePolicy(
        max_attempts=1, circuit_failure_threshold=3, circuit_cooldown_seconds=30, read_timeout=2
    )
    client = PortalHttp(
        portal_base_url=server.url, default_policy=policy, sleep=sleeps, monotonic=clock
    )
    failing = {"key": "cb", "fail": 4, "code": 503}
    try:
        for _ in range(3):
            with pytest.raises(RetryLater):
                await client.request("cbsrc", "GET", url("flaky"), params=failing)
        assert client.circuit("cbsrc").state is CircuitState.OPEN
        assert hits["cb"] == 3
        # Open: refused without a request.
        with pytest.raises(RetryLater) as caught:
            await client.request("cbsrc", "GET", url("flaky"), params=failing)
        assert caught.value.reason == "circuit_open"
        assert 0 < caught.value.retry_after <= 30
        assert hits["cb"] == 3
        # Other sources are unaffected.
        assert client.circuit("other").state is CircuitState.CLOSED
        # After the cooldown: half-open, one trial; it fails (4th failure) -> open again.
        clock.now += 31
        assert client.circuit("cbsrc").state is CircuitState.HALF_OPEN
        with pytest.raises(RetryLater) as caught:
            await client.request("cbsrc", "GET", url("flaky"), params=failing)
        assert caught.value.reason == "down"
        assert client.circuit("cbsrc").state is CircuitState.OPEN
        # Next trial succeeds -> closed.
        clock.now += 31
        response = await client.request("cbsrc", "GET", url("flaky"), params=failing)
        assert response.status_code == 200
        assert client.circuit("cbsrc").state is CircuitState.CLOSED
        assert client.circuit("cbsrc").consecutive_failures == 0
    finally:
        await client.aclose()


def test_parse_retry_after() -> None:
    assert parse_retry_after("7") == 7.0
    assert parse_retry_after("soon") is None
    assert parse_retry_after(None) is None
    assert parse_retry_after("Wed, 21 Oct 2015 07:28:00 GMT") == 0.0


async def test_simulator_rewrite_keeps_query() -> None:
    client = PortalHttp(portal_base_url="http://127.0.0.1:1/_sim/")
    assert client.url("https://aca-prod.accela.com/SANDIEGO/Cap/CapDetail.aspx?capID1=1") == (
        "http://127.0.0.1:1/_sim/aca-prod.accela.com/SANDIEGO/Cap/CapDetail.aspx?capID1=1"
    )
    await client.aclose()


def test_unknown_policy_override_is_rejected() -> None:
    with pytest.raises(ValueError, match="unknown source policy"):
        SourcePolicy().with_overrides({"read_timout": 3})
    assert SourcePolicy().with_overrides({"read_timeout": 3}).read_timeout == 3


async def test_a_portal_retry_after_out_of_the_rules_is_ignored_or_capped(
    http: PortalHttp, sleeps: RecordingSleep
) -> None:
    """Unicode digits are no wait at all (the default applies); a huge value is capped, and is
    then too long to wait for in-request: neither is an internal error."""
    with pytest.raises(RetryLater) as ignored:
        await http.request(
            "src", "GET", url("flaky"),
            params={"key": "ra-uni", "fail": 9, "code": 429, "retry_after": "\u00b2"},
        )  # fmt: skip
    assert ignored.value.reason == "throttled"
    assert ignored.value.retry_after < 3600
    with pytest.raises(RetryLater) as capped:
        await http.request(
            "src", "GET", url("flaky"),
            params={"key": "ra-huge", "fail": 9, "code": 503, "retry_after": "9" * 40},
        )  # fmt: skip
    assert capped.value.retry_after == 12 * 3600
    assert hits["ra-huge"] == 1
