"""Black-box, on real servers: the client address is the TCP peer unless that peer is a trusted
proxy (issue 19 item 3), keyless jurisdiction requests are bounded per address (item 5),
`serve` refuses short secret keys but takes 32 bytes (item 9), and a sandbox key deactivated
with the CLI is refused on its very next call (item 7).

The servers here trust no proxy (the default): loopback sending X-Forwarded-For is a client
like any other, so rotating the header never buys more demo calls, over REST or the tool
server. The trusted-proxy setup is tests/acceptance/test_demo_dev_server.py.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.support.cli import cli_env, run_cli
from tests.support.dev_server import DevServer, dev_server, free_port
from tests.support.long_running import running
from tests.support.mcp_client import call_tool, problem, structured
from tests.support.problems import assert_problem

pytestmark = pytest.mark.slow
CURATED = "21030-20000-00256"
DEMO_CAP = 30
SECRET_OF_32_BYTES = "0123456789abcdef0123456789abcdef"


def spoofed(index: int) -> dict[str, str]:
    return {"X-Forwarded-For": f"198.51.100.{index % 250 + 1}, 203.0.113.{index % 200 + 1}"}


def exhaust_then_rotate(http: httpx.Client) -> None:
    """The cap is counted for the peer whatever the header says, and 40 more calls with a
    fresh forwarded address each are all refused."""
    for index in range(DEMO_CAP):
        served = http.get(f"/api/v1/permits/{CURATED}/status", headers=spoofed(index))
        assert served.status_code == 200, served.text
        assert served.headers["x-ratelimit-remaining"] == str(DEMO_CAP - 1 - index)
    for index in range(DEMO_CAP, DEMO_CAP + 40):
        refused = http.get(f"/api/v1/permits/{CURATED}/status", headers=spoofed(index))
        assert_problem(refused, 429, "demo_limit_exceeded")
        assert int(refused.headers["retry-after"]) > 0


@pytest.fixture(scope="module")
def untrusting(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DevServer]:
    workdir: Path = tmp_path_factory.mktemp("no-proxy")
    with dev_server("sqlite", workdir, "--latency-ms", "0") as started:
        yield started


def test_dev_ignores_forwarded_addresses_from_an_untrusted_peer(untrusting: DevServer) -> None:
    with httpx.Client(base_url=untrusting.base_url, timeout=30) as http:
        exhaust_then_rotate(http)
        batch = http.post(
            "/api/v1/permits/batch-status",
            json={"permit_numbers": [CURATED]},
            headers={"X-Forwarded-For": "192.0.2.77"},
        )
        assert_problem(batch, 429, "demo_limit_exceeded")
    # The tool server's keyless calls count against the same address.
    for index in range(40):
        result = call_tool(
            untrusting.base_url,
            None,
            "get_permit_status",
            {"permit_number": CURATED},
            headers=spoofed(1000 + index),
        )
        assert problem(result)["code"] == "demo_limit_exceeded"


def test_keyless_jurisdiction_requests_are_bounded_whatever_the_forwarded_address(
    untrusting: DevServer,
) -> None:
    """The attack of issue 19: 100 keyless votes for one name (rotating X-Forwarded-For) and
    markup as a name. One vote counts, 10 calls a day are admitted, the markup is refused."""
    request = "/api/v1/jurisdictions/request"
    with httpx.Client(base_url=untrusting.base_url, timeout=30) as http:
        markup = http.post(
            request, json={"jurisdiction_name": "<img src=x onerror=alert(1)>", "state": "CA"}
        )
        assert_problem(markup, 400, "invalid_jurisdiction_name")
        answers = [
            http.post(
                request,
                json={"jurisdiction_name": "Stuffington", "state": "OR"},
                headers=spoofed(index),
            )
            for index in range(100)
        ]
        assert [a.status_code for a in answers[:10]] == [200] * 10
        assert {a.json()["request_count"] for a in answers[:10]} == {1}
        for refused in answers[10:]:
            assert_problem(refused, 429, "jurisdiction_request_limit_exceeded")
            assert int(refused.headers["retry-after"]) > 0
        listed = http.get("/api/v1/jurisdictions/requests").json()["requests"]
        names = {entry["jurisdiction_name"]: entry["request_count"] for entry in listed}
        assert names.get("Stuffington") == 1
        assert not any("<" in name for name in names)


def test_dev_tool_server_demo_is_capped_per_peer_too(tmp_path: Path) -> None:
    """Over MCP alone (a fresh server, a cap of 5): rotating headers never add calls."""
    with dev_server(
        "sqlite", tmp_path, "--latency-ms", "0", env_overrides={"PERMITAPI_DEMO_CALLS_PER_DAY": "5"}
    ) as started:
        for index in range(5):
            result = call_tool(
                started.base_url,
                None,
                "get_permit_status",
                {"permit_number": CURATED},
                headers=spoofed(index),
            )
            assert structured(result)["permit_number"]
        for index in range(5, 45):
            result = call_tool(
                started.base_url,
                None,
                "get_permit_status",
                {"permit_number": CURATED},
                headers=spoofed(index),
            )
            assert problem(result)["code"] == "demo_limit_exceeded"


def test_serve_with_a_32_byte_secret_starts_and_trusts_no_forwarded_address(
    tmp_path: Path,
) -> None:
    url = f"sqlite+aiosqlite:///{tmp_path / 'serve.db'}"
    env = cli_env(url, PERMITAPI_SECRET_KEY=SECRET_OF_32_BYTES)
    port = free_port()
    base_url = f"http://127.0.0.1:{port}"
    serve = ["serve", "--host", "127.0.0.1", "--port", str(port)]
    with (
        running(serve, cwd=tmp_path, env=env, ready_url=f"{base_url}/healthz"),
        httpx.Client(base_url=base_url, timeout=30) as http,
    ):
        exhaust_then_rotate(http)


def test_serve_refuses_a_31_byte_secret(tmp_path: Path) -> None:
    url = f"sqlite+aiosqlite:///{tmp_path / 'serve.db'}"
    env = cli_env(url, PERMITAPI_SECRET_KEY=SECRET_OF_32_BYTES[:-1])
    result = run_cli("serve", "--port", "1", cwd=tmp_path, env=env, timeout=60)
    assert result.returncode == 2
    assert "PERMITAPI_SECRET_KEY must be at least 32 bytes" in result.stderr


def test_a_deactivated_sandbox_key_is_refused_on_its_next_call(
    server: DevServer, http: httpx.Client
) -> None:
    created = server.cli("keys", "create", "--plan", "developer", "--json")
    assert created.returncode == 0, created.stderr
    sandbox = json.loads(created.stdout)["sandbox_key"]
    headers = {"X-API-Key": sandbox}
    status_url = f"/api/v1/permits/{CURATED}/status"
    batch_body = {"permit_numbers": [CURATED]}
    # Both calls answer (and the key now sits in the server's key cache).
    for _ in range(3):
        assert http.get(status_url, headers=headers).status_code == 200
        batch = http.post("/api/v1/permits/batch-status", json=batch_body, headers=headers)
        assert batch.status_code == 200, batch.text
    deactivated = server.cli("keys", "deactivate", sandbox)
    assert deactivated.returncode == 0, deactivated.stderr
    assert_problem(http.get(status_url, headers=headers), 401, "invalid_api_key")
    refused = http.post("/api/v1/permits/batch-status", json=batch_body, headers=headers)
    assert_problem(refused, 401, "invalid_api_key")
    assert_problem(http.get(status_url, headers=headers), 401, "invalid_api_key")
