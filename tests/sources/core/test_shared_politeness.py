"""The politeness budget shared through Redis: two PortalHttp clients (what two API processes
or a process and a worker hold) that share a Redis start no more requests per second on a
portal host, together, than the policy allows one; without Redis each paces only itself; with
Redis down each falls back to its own bucket and nothing fails."""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import Iterator

import pytest

from permitapi.sources.http import PortalHttp
from permitapi.sources.http_policy import SourcePolicy
from permitapi.sources.shared_pace import SharedPacer
from tests.sources.core.support import LoopbackServer
from tests.sources.core.test_politeness import app, arrivals, get
from tests.support.shared_redis import REDIS_URL

RATE, BURST, REQUESTS = 10.0, 2, 24
POLICY = SourcePolicy(max_concurrency=20, burst=BURST, requests_per_second=RATE)


@pytest.fixture(scope="module")
def server() -> Iterator[LoopbackServer]:
    with LoopbackServer(app) as running:
        yield running


@pytest.fixture(autouse=True)
def fresh_arrivals() -> None:
    arrivals.clear()


def clients(server: LoopbackServer, redis_url: str | None) -> list[PortalHttp]:
    namespace = f"permitapi-test-{uuid.uuid4().hex}"
    return [
        PortalHttp(
            portal_base_url=server.url,
            default_policy=POLICY,
            shared_pacer=SharedPacer(redis_url, namespace) if redis_url else None,
        )
        for _ in range(2)
    ]


async def burst_through(pair: list[PortalHttp]) -> float:
    started = time.monotonic()
    try:
        await asyncio.gather(*(get(pair[i % 2], f"r{i}") for i in range(REQUESTS)))
    finally:
        for http in pair:
            await http.aclose()
    return time.monotonic() - started


def busiest_second() -> int:
    moments = sorted(moment for _, moment in arrivals)
    return max(sum(1 for m in moments if start <= m < start + 1.0) for start in moments)


async def test_two_clients_share_one_budget_through_redis(server: LoopbackServer) -> None:
    elapsed = await burst_through(clients(server, REDIS_URL))
    assert len(arrivals) == REQUESTS
    # Together: the burst, then RATE a second (GCRA: at most RATE + BURST in any second).
    assert busiest_second() <= RATE + BURST
    assert elapsed >= (REQUESTS - BURST) / RATE - 0.15


async def test_without_redis_each_client_paces_only_itself(server: LoopbackServer) -> None:
    elapsed = await burst_through(clients(server, None))
    assert len(arrivals) == REQUESTS
    # Two budgets: about twice the rate on the host, which is what sharing prevents.
    assert busiest_second() > RATE + BURST
    assert elapsed < (REQUESTS - BURST) / RATE


async def test_redis_down_falls_back_to_per_client_pacing(
    server: LoopbackServer, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level("WARNING", logger="permitapi.sources.shared_pace"):
        await burst_through(clients(server, "redis://127.0.0.1:1/0"))
    assert len(arrivals) == REQUESTS
    assert "politeness is per process" in caplog.text
    # Each client still paces itself: never more than two budgets' worth.
    assert busiest_second() <= 2 * (RATE + BURST)
