"""One real `permitapi dev` server per database backend, shared by the acceptance modules.

Two server starts in all (SQLite, PostgreSQL): each module uses its own keys or only reads
shared state, so they can share a server. The simulator's latency is 0 so walks stay fast.
"""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest

from tests.support.dev_server import DevServer, dev_server


@pytest.fixture(scope="session", params=["sqlite", "postgresql"])
def server(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[DevServer]:
    workdir = tmp_path_factory.mktemp("dev")
    with dev_server(request.param, workdir, "--latency-ms", "0") as running:
        if running.sqlite:
            assert (workdir / "var" / "permitapi.db").exists()
        yield running


@pytest.fixture
def http(server: DevServer) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=server.base_url, timeout=30) as client:
        yield client


@pytest.fixture(autouse=True)
def clear_simulator_faults(request: pytest.FixtureRequest) -> Iterator[None]:
    """A test that fails between injecting a fault and consuming it must not hand the fault to
    the next test on the shared server (one failure would otherwise cascade)."""
    yield
    if "server" not in request.fixturenames:
        return
    running: DevServer = request.getfixturevalue("server")
    with httpx.Client(base_url=running.base_url, timeout=30) as client:
        cleared = client.delete("/_sim/_control/faults")
        assert cleared.status_code == 200, cleared.text
