"""Burst windows on Redis: two app instances (two API processes) share one window per key."""

from __future__ import annotations

import time
import uuid
from contextlib import AsyncExitStack

import httpx
import pytest

from permitapi.config import Settings
from permitapi.kit.clock import FrozenClock
from tests.support.accounts import make_account
from tests.support.problems import assert_problem
from tests.support.shared_redis import REDIS_URL, two_instances


async def call(client: httpx.AsyncClient, key: str, n: int) -> httpx.Response:
    return await client.post(
        "/api/v1/jurisdictions/request",
        json={"jurisdiction_name": f"Redisville {'abcdefghijklmnopqrstuvwxyz'[n]}", "state": "OR"},
        headers={"X-API-Key": key},
    )


@pytest.fixture
def redis_settings(settings: Settings) -> Settings:
    # A namespace of its own, so parallel runs sharing this Redis never share a window.
    return settings.model_copy(
        update={"redis_url": REDIS_URL, "redis_namespace": f"permitapi-test-{uuid.uuid4().hex}"}
    )


async def test_two_instances_share_one_window_on_redis(
    redis_settings: Settings, clock: FrozenClock
) -> None:
    async with AsyncExitStack() as stack:
        ctx, first, second = await two_instances(stack, redis_settings, clock)
        key = (await make_account(ctx, "free")).live_key
        started = time.time()
        assert (await call(first, key, 1)).status_code == 200
        assert (await call(first, key, 2)).status_code == 200
        assert (await call(second, key, 3)).status_code == 200
        refused = await call(second, key, 4)
        elapsed = time.time() - started
        body = assert_problem(refused, 429, "burst_limit_exceeded")
        # The shared window opened with the first call, made through the other instance.
        assert 60 - elapsed - 1 <= body["retry_after_seconds"] <= 60
        assert refused.headers["retry-after"] == str(body["retry_after_seconds"])
        assert_problem(await call(first, key, 5), 429, "burst_limit_exceeded")


async def test_namespaces_keep_windows_apart(redis_settings: Settings, clock: FrozenClock) -> None:
    async with AsyncExitStack() as stack:
        ctx, first, _ = await two_instances(stack, redis_settings, clock)
        other = redis_settings.model_copy(
            update={"redis_namespace": redis_settings.redis_namespace + "-other"}
        )
        _, elsewhere, _ = await two_instances(stack, other, clock)
        key = (await make_account(ctx, "free")).live_key
        for n in range(3):
            assert (await call(first, key, n)).status_code == 200
        assert (await call(elsewhere, key, 9)).status_code == 200


async def test_without_redis_each_instance_has_its_own_window(
    settings: Settings, clock: FrozenClock
) -> None:
    # The control: memory storage is per process, so the split 2 + 2 calls all pass.
    async with AsyncExitStack() as stack:
        ctx, first, second = await two_instances(stack, settings, clock)
        key = (await make_account(ctx, "free")).live_key
        outcomes = [
            (await call(client, key, n)).status_code
            for n, client in enumerate((first, first, second, second))
        ]
        assert outcomes == [200, 200, 200, 200]


async def test_redis_down_degrades_to_per_process_windows(
    settings: Settings, clock: FrozenClock, caplog: pytest.LogCaptureFixture
) -> None:
    # Nothing listens on port 1: every Redis call fails fast.
    down = settings.model_copy(update={"redis_url": "redis://127.0.0.1:1/0"})
    async with AsyncExitStack() as stack:
        ctx, first, second = await two_instances(stack, down, clock)
        key = (await make_account(ctx, "free")).live_key
        with caplog.at_level("WARNING", logger="permitapi.kit.burst"):
            answers = [(await call(first, key, n)).status_code for n in range(3)]
        assert answers == [200, 200, 200]
        assert "rate windows are per process" in caplog.text
        assert_problem(await call(first, key, 4), 429, "burst_limit_exceeded")
        # Each process keeps its own window while Redis is away.
        assert (await call(second, key, 5)).status_code == 200
        demo = await second.get("/api/v1/permits/21030-20000-00256/status")
        assert demo.status_code == 200
        assert demo.headers["x-ratelimit-remaining"] == "29"
