"""One real `permitapi dev` server per database backend (SQLite, PostgreSQL) for the tool-server
suites, driven only over HTTP: the official MCP SDK client on /mcp, httpx on the REST twin.

The server trusts X-Forwarded-For from loopback (PERMITAPI_TRUSTED_PROXIES), so each keyless
test picks its own client address and its own demo window (PERMITAPI_DEMO_CALLS_PER_DAY=5).
It also accepts a second, deployment-like host for /mcp (PERMITAPI_MCP_ALLOWED_HOSTS/ORIGINS).
"""

from __future__ import annotations

import ipaddress
import json
import random
from collections.abc import Iterator

import httpx
import pytest

from tests.support.dev_server import DevServer, dev_server

DEPLOYED_HOST = "permits.example.test"
DEMO_CALLS_PER_DAY = 5
SERVER_ENV = {
    "PERMITAPI_MCP_ALLOWED_HOSTS": json.dumps(["127.0.0.1:*", "localhost:*", DEPLOYED_HOST]),
    "PERMITAPI_MCP_ALLOWED_ORIGINS": json.dumps(
        ["http://127.0.0.1:*", "http://localhost:*", f"https://{DEPLOYED_HOST}"]
    ),
    "PERMITAPI_TRUSTED_PROXIES": json.dumps(["127.0.0.1"]),
    "PERMITAPI_DEMO_CALLS_PER_DAY": str(DEMO_CALLS_PER_DAY),
}


@pytest.fixture(scope="session", params=["sqlite", "postgresql"])
def server(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[DevServer]:
    workdir = tmp_path_factory.mktemp("mcp-dev")
    with dev_server(
        request.param, workdir, "--latency-ms", "0", env_overrides=SERVER_ENV
    ) as running:
        yield running


@pytest.fixture(scope="session")
def accounts(server: DevServer) -> dict[str, dict[str, str]]:
    """Accounts of this suite: enterprise with the discovery add-on (600 calls a minute), pro
    without it (the free discovery allowance), free (3 calls a minute, 1 watch)."""
    made = {}
    for name, args in {
        "enterprise": ("--plan", "enterprise", "--discovery-addon"),
        "pro": ("--plan", "pro"),
        "free": ("--plan", "free"),
    }.items():
        created = server.cli("keys", "create", *args, "--json")
        assert created.returncode == 0, created.stderr
        made[name] = json.loads(created.stdout)
    return made


def new_account(server: DevServer, plan: str, *extra: str) -> dict[str, str]:
    """A fresh account, for tests that use up a window or a cap."""
    created = server.cli("keys", "create", "--plan", plan, *extra, "--json")
    assert created.returncode == 0, created.stderr
    account: dict[str, str] = json.loads(created.stdout)
    return account


def client_address() -> str:
    """An address of its own in the IPv6 documentation range (RFC 3849): a fresh demo window."""
    return str(ipaddress.IPv6Address("2001:db8::") + random.randrange(1, 2**64))


@pytest.fixture
def http(server: DevServer) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=server.base_url, timeout=60) as client:
        client.delete("/_sim/_control/faults")
        yield client
        client.delete("/_sim/_control/faults")
