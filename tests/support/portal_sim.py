"""`permitapi portal-sim` in a process of its own (tests/support/long_running.py), and a small
client of its control API.

For tests whose workers are real `permitapi` processes: they reach the portals through
PERMITAPI_PORTAL_BASE_URL=<url>, and the test changes permits and injects faults through
`/_control` (see permitapi.portalsim.control).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any
from urllib.parse import quote

import httpx

from tests.support.cli import cli_env
from tests.support.dev_server import free_port
from tests.support.long_running import running


@contextmanager
def running_portal_sim(*extra_args: str) -> Iterator[str]:
    """The simulator's base URL (no latency unless faults add it), until the block ends."""
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    with running(
        ["portal-sim", "--port", str(port), "--latency-ms", "0", *extra_args],
        cwd=None,
        env=cli_env(None),
        ready_url=f"{url}/_control/stats",
        # Not SIGTERM: a graceful stop would wait for slow responses to killed workers.
        graceful=False,
    ):
        yield url


class SimControl:
    """The control API over an async client (`base_url` = the simulator's URL)."""

    def __init__(self, http: httpx.AsyncClient) -> None:
        self.http = http

    @staticmethod
    def _permit_path(slug: str, number: str) -> str:
        return f"/_control/permits/{quote(slug, safe='')}/{quote(number, safe='')}"

    async def permits(self, slug: str, limit: int = 100) -> list[dict[str, str]]:
        response = await self.http.get("/_control/permits", params={"source": slug, "limit": limit})
        assert response.status_code == 200, response.text
        listed: list[dict[str, str]] = response.json()["permits"]
        return listed

    async def permit(self, slug: str, number: str) -> dict[str, Any]:
        response = await self.http.get(self._permit_path(slug, number))
        assert response.status_code == 200, response.text
        body: dict[str, Any] = response.json()
        return body

    async def put(self, slug: str, number: str, **changes: Any) -> dict[str, Any]:
        """Create the permit (the simulator's defaults: issued today) or change its fields."""
        response = await self.http.put(self._permit_path(slug, number), json=changes)
        assert response.status_code in (200, 201), response.text
        body: dict[str, Any] = response.json()
        return body

    async def fault(self, source: str, mode: str, latency_ms: int = 0) -> None:
        response = await self.http.post(
            "/_control/faults", json={"source": source, "mode": mode, "latency_ms": latency_ms}
        )
        assert response.status_code == 201, response.text

    async def clear_faults(self) -> None:
        response = await self.http.delete("/_control/faults")
        assert response.status_code == 200, response.text

    async def requests(self) -> dict[str, int]:
        response = await self.http.get("/_control/stats")
        assert response.status_code == 200, response.text
        counts: dict[str, int] = response.json()["requests"]
        return counts
