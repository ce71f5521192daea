"""Circuit-breaker state shared through Redis: two PortalHttp clients (what two API processes or
a process and a worker hold) against a real loopback portal. Failures seen by either open the
circuit for both, the cooldown ends in exactly one trial request across both, and its outcome
closes or reopens the circuit for both. With Redis down each client is exactly its own
breaker, as without Redis, and nothing fails for it."""

from __future__ import annotations

import asyncio
import time
import uuid
from collections import Counter
from collections.abc import AsyncIterator, Iterator

import pytest
import redis.asyncio as redis
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import PlainTextResponse, RedirectResponse, Response
from starlette.routing import Route

from permitapi.sources.base import Blocked, RetryLater
from permitapi.sources.circuit import CircuitState
from permitapi.sources.http import PortalHttp
from permitapi.sources.http_policy import SourcePolicy
from permitapi.sources.shared_circuit import SharedCircuits
from tests.sources.core.support import LoopbackServer
from tests.support.shared_redis import REDIS_URL

SOURCE = "shared-src"
HOST = "portal.example.gov"
URL = f"https://{HOST}/page"
THRESHOLD, COOLDOWN = 3, 0.3
POLICY = SourcePolicy(
    max_attempts=1,
    circuit_failure_threshold=THRESHOLD,
    circuit_cooldown_seconds=COOLDOWN,
    connect_timeout=2.0,
    read_timeout=2.0,
)
DOWN_REDIS_URL = "redis://127.0.0.1:1/0"

# What the portal answers: "down" (502), "up" (200) or "wall" (a redirect to Login.aspx).
portal = {"mode": "down"}
hits: Counter[str] = Counter()  # requests that reached the portal, per client


async def page(request: Request) -> Response:
    hits[request.query_params["who"]] += 1
    await asyncio.sleep(float(request.query_params.get("hold", "0")))
    if portal["mode"] == "up":
        return PlainTextResponse("ok")
    if portal["mode"] == "wall":
        return RedirectResponse(f"/{HOST}/Login.aspx", status_code=302)
    return PlainTextResponse("bad gateway", status_code=502)


app = Starlette(routes=[Route(f"/{HOST}/page", page)])


@pytest.fixture(scope="module")
def server() -> Iterator[LoopbackServer]:
    with LoopbackServer(app) as running:
        yield running


@pytest.fixture(autouse=True)
def portal_down() -> None:
    portal["mode"] = "down"
    hits.clear()


@pytest.fixture
def namespace() -> str:
    return f"permitapi-test-{uuid.uuid4().hex}"


def client(server: LoopbackServer, redis_url: str | None, namespace: str) -> PortalHttp:
    return PortalHttp(
        portal_base_url=server.url,
        default_policy=POLICY,
        shared_circuits=SharedCircuits(redis_url, namespace) if redis_url else None,
    )


@pytest.fixture
async def pair(server: LoopbackServer, namespace: str) -> AsyncIterator[tuple[PortalHttp, ...]]:
    clients = (client(server, REDIS_URL, namespace), client(server, REDIS_URL, namespace))
    try:
        yield clients
    finally:
        for http in clients:
            await http.aclose()
        cleanup = redis.from_url(REDIS_URL)
        await cleanup.delete(f"{namespace}:circuit:{SOURCE}")
        await cleanup.aclose()


async def call(http: PortalHttp, who: str, hold: float = 0.0) -> str:
    """ "ok", or the RetryLater reason, or "blocked"."""
    try:
        await http.request(SOURCE, "GET", URL, params={"who": who, "hold": str(hold)})
    except RetryLater as error:
        return error.reason
    except Blocked:
        return "blocked"
    return "ok"


async def until_half_open(http: PortalHttp) -> None:
    deadline = time.monotonic() + 5
    while (await http.circuit_state(SOURCE)).state is not CircuitState.HALF_OPEN:
        assert time.monotonic() < deadline, "the cooldown never ended"
        await asyncio.sleep(0.02)


async def open_through(http: PortalHttp, who: str) -> None:
    assert [await call(http, who) for _ in range(THRESHOLD)] == ["down"] * THRESHOLD


async def test_failures_seen_by_one_client_open_the_circuit_for_the_other(
    pair: tuple[PortalHttp, PortalHttp],
) -> None:
    a, b = pair
    await open_through(a, "a")
    with pytest.raises(RetryLater) as refused:
        await b.request(SOURCE, "GET", URL, params={"who": "b"})
    assert refused.value.reason == "circuit_open"
    assert 0 < refused.value.retry_after <= COOLDOWN
    assert hits == {"a": THRESHOLD}  # B sent nothing
    # B's own breaker saw nothing; the state it reports is the shared one.
    assert b.circuit(SOURCE).state is CircuitState.CLOSED
    shared = await b.circuit_state(SOURCE)
    assert shared.state is CircuitState.OPEN
    assert shared.consecutive_failures == THRESHOLD
    assert shared.retry_in_seconds is not None
    assert 0 < shared.retry_in_seconds <= COOLDOWN


async def test_failures_split_across_clients_reach_the_threshold_together(
    pair: tuple[PortalHttp, PortalHttp],
) -> None:
    a, b = pair
    assert [await call(a, "a"), await call(b, "b"), await call(a, "a")] == ["down"] * 3
    assert await call(a, "a") == "circuit_open"
    assert await call(b, "b") == "circuit_open"
    assert hits == {"a": 2, "b": 1}
    # Neither breaker alone reached the threshold.
    assert a.circuit(SOURCE).state is CircuitState.CLOSED
    assert b.circuit(SOURCE).state is CircuitState.CLOSED


async def test_exactly_one_trial_across_both_and_its_success_closes_for_both(
    pair: tuple[PortalHttp, PortalHttp],
) -> None:
    a, b = pair
    await open_through(a, "a")
    portal["mode"] = "up"
    await until_half_open(b)
    hits.clear()
    # Three calls from each client at once; the trial is held 0.3 s by the portal, so every
    # other call asks while it is out.
    outcomes = await asyncio.gather(
        *(call(http, who, hold=0.3) for http, who in [(a, "a"), (b, "b")] * 3)
    )
    assert sorted(outcomes) == ["circuit_open"] * 5 + ["ok"]
    assert sum(hits.values()) == 1
    for http in (a, b):
        snapshot = await http.circuit_state(SOURCE)
        assert snapshot.state is CircuitState.CLOSED
        assert snapshot.consecutive_failures == 0
    assert [await call(a, "a"), await call(b, "b")] == ["ok", "ok"]


async def test_a_failed_trial_reopens_for_both(pair: tuple[PortalHttp, PortalHttp]) -> None:
    a, b = pair
    await open_through(b, "b")
    await until_half_open(a)
    assert await call(a, "a") == "down"  # the trial, still failing
    assert [await call(a, "a"), await call(b, "b")] == ["circuit_open"] * 2
    assert hits == {"b": THRESHOLD, "a": 1}
    snapshot = await b.circuit_state(SOURCE)
    assert snapshot.state is CircuitState.OPEN
    assert snapshot.consecutive_failures == THRESHOLD + 1
    assert snapshot.retry_in_seconds is not None
    assert 0 < snapshot.retry_in_seconds <= COOLDOWN


async def test_a_trial_that_tells_nothing_frees_the_trial_at_once(
    pair: tuple[PortalHttp, PortalHttp],
) -> None:
    a, b = pair
    await open_through(a, "a")
    await until_half_open(a)
    portal["mode"] = "wall"
    assert await call(a, "a") == "blocked"  # a login wall says nothing about availability
    portal["mode"] = "up"
    # The lease (timeouts + margin, 14 s here) did not have to lapse: B is the next trial.
    assert await call(b, "b") == "ok"
    assert (await a.circuit_state(SOURCE)).state is CircuitState.CLOSED


async def test_a_cancelled_trial_frees_the_trial(pair: tuple[PortalHttp, PortalHttp]) -> None:
    a, b = pair
    await open_through(a, "a")
    await until_half_open(a)
    portal["mode"] = "up"
    trial = asyncio.ensure_future(call(a, "a", hold=1.0))
    deadline = time.monotonic() + 5
    while hits["a"] == THRESHOLD:  # until the trial reached the portal
        assert time.monotonic() < deadline, "the trial never reached the portal"
        await asyncio.sleep(0.01)
    assert await call(b, "b") == "circuit_open"
    trial.cancel()
    with pytest.raises(asyncio.CancelledError):
        await trial
    # The release runs in the background; well within the 14 s lease, B gets the trial.
    deadline = time.monotonic() + 0.9
    while (outcome := await call(b, "b")) == "circuit_open":
        assert time.monotonic() < deadline, "the cancelled trial was not released"
        await asyncio.sleep(0.02)
    assert outcome == "ok"


async def test_a_trial_holder_that_vanished_loses_the_trial_after_its_lease(
    namespace: str,
) -> None:
    shared = SharedCircuits(REDIS_URL, namespace)
    try:
        for _ in range(THRESHOLD):
            await shared.record_failure(
                SOURCE, failure_threshold=THRESHOLD, cooldown_seconds=COOLDOWN, trial_seconds=1
            )
        key = f"{namespace}:circuit:{SOURCE}"
        assert await shared._client.pttl(key) > 3_600_000  # stale state expires
        deadline = time.monotonic() + 5
        while True:
            claimed = await shared.allow(
                SOURCE, cooldown_seconds=COOLDOWN, trial_seconds=0.2, token="gone"
            )
            assert claimed is not None
            if claimed.allowed:
                break
            assert time.monotonic() < deadline
            await asyncio.sleep(0.02)
        assert claimed.trial
        # The holder never reports back; others are refused until the lease lapses.
        other = await shared.allow(SOURCE, cooldown_seconds=COOLDOWN, trial_seconds=0.2, token="b")
        assert other is not None
        assert (other.allowed, other.trial) == (False, False)
        await asyncio.sleep(0.25)
        other = await shared.allow(SOURCE, cooldown_seconds=COOLDOWN, trial_seconds=0.2, token="b")
        assert other is not None
        assert (other.allowed, other.trial) == (True, True)
        # Releasing is the holder's alone.
        assert await shared.release_trial(SOURCE, "gone") is False
        assert await shared.release_trial(SOURCE, "b") is True
        await shared._client.delete(key)
    finally:
        await shared.aclose()


async def scripted_outage(http: PortalHttp, who: str) -> list[str]:
    """Open the circuit, fail one trial, pass the next: what one breaker does alone."""
    outcomes = [await call(http, who) for _ in range(THRESHOLD + 1)]
    await asyncio.sleep(COOLDOWN + 0.05)
    outcomes += [await call(http, who), await call(http, who)]
    portal["mode"] = "up"
    await asyncio.sleep(COOLDOWN + 0.05)
    outcomes += [await call(http, who), await call(http, who)]
    portal["mode"] = "down"
    return outcomes


async def test_redis_down_leaves_each_client_its_own_breaker(
    server: LoopbackServer, namespace: str, caplog: pytest.LogCaptureFixture
) -> None:
    alone = client(server, None, namespace)
    a = client(server, DOWN_REDIS_URL, namespace)
    b = client(server, DOWN_REDIS_URL, namespace)
    try:
        expected = await scripted_outage(alone, "alone")
        assert expected == ["down"] * THRESHOLD + ["circuit_open", "down", "circuit_open"] + [
            "ok",
            "ok",
        ]
        with caplog.at_level("WARNING", logger="permitapi.sources.shared_circuit"):
            assert await scripted_outage(a, "a") == expected
            # B learns nothing from A's failures: its own breaker, its own requests.
            assert await scripted_outage(b, "b") == expected
            assert await call(a, "a") == "down"
            state = await a.circuit_state(SOURCE)
        assert state == a.circuit(SOURCE)
        assert state.consecutive_failures == 1
    finally:
        await alone.aclose()
        await a.aclose()
        await b.aclose()
    assert hits == {"alone": 6, "a": 7, "b": 6}
    warnings = [
        record.getMessage()
        for record in caplog.records
        if record.name == "permitapi.sources.shared_circuit"
    ]
    # One warning per client (per process), not one per request.
    assert len(warnings) == 2
    assert all("circuit breakers are per process" in message for message in warnings)
