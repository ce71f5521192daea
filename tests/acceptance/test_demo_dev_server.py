"""Black-box acceptance of the anonymous demo on a real `permitapi dev` server behind a
(pretend) reverse proxy: loopback is a trusted proxy here, so X-Forwarded-For names the client,
and two clients can be told apart from one machine."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.support.dev_server import DevServer, dev_server
from tests.support.problems import assert_problem

pytestmark = pytest.mark.slow
CURATED = "21030-20000-00256"


@pytest.fixture(scope="module")
def proxied(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DevServer]:
    workdir: Path = tmp_path_factory.mktemp("demo")
    overrides = {"PERMITAPI_TRUSTED_PROXIES": json.dumps(["127.0.0.1"])}
    with dev_server("sqlite", workdir, "--latency-ms", "0", env_overrides=overrides) as running:
        yield running


def test_keyless_calls_are_the_capped_demo(proxied: DevServer) -> None:
    with httpx.Client(base_url=proxied.base_url, timeout=30) as http:
        first = http.get(
            f"/api/v1/permits/{CURATED}/status", headers={"X-Forwarded-For": "203.0.113.10"}
        )
        assert first.status_code == 200, first.text
        assert first.headers["x-demo-mode"] == "true"
        assert first.headers["x-ratelimit-limit"] == "30"
        assert first.headers["x-ratelimit-remaining"] == "29"
        assert first.json()["status"] == "Issued"
        for _ in range(29):
            served = http.get(
                f"/api/v1/permits/{CURATED}/status", headers={"X-Forwarded-For": "203.0.113.10"}
            )
            assert served.status_code == 200
        refused = http.get(
            f"/api/v1/permits/{CURATED}/status", headers={"X-Forwarded-For": "203.0.113.10"}
        )
        assert_problem(refused, 429, "demo_limit_exceeded")
        assert int(refused.headers["retry-after"]) > 0
        other = http.get(
            f"/api/v1/permits/{CURATED}/status", headers={"X-Forwarded-For": "203.0.113.11"}
        )
        assert other.status_code == 200
        assert other.headers["x-ratelimit-remaining"] == "29"
        # No demo call moved any meter: the dev accounts' usage is untouched.
        for account in proxied.keys.values():
            usage = http.get("/api/v1/usage", headers={"X-API-Key": account["live_key"]}).json()
            assert usage["lookup"]["used"] == 0
        assert_problem(http.get(f"/api/v1/permits/{CURATED}/history"), 401, "invalid_api_key")
