"""`permitapi dev`: the simulator mounted at /_sim and every portal pointed at it."""

from __future__ import annotations

import httpx

from permitapi.app import create_app
from permitapi.cli import SIM_PREFIX, dev_settings
from permitapi.config import Settings
from permitapi.portalsim.app import create_sim_app
from tests.sources.core.support import ECHO_FAMILIES


def test_dev_settings_point_portals_at_the_mounted_simulator() -> None:
    assert dev_settings("127.0.0.1", 8123).portal_base_url == "http://127.0.0.1:8123/_sim"


async def test_simulator_control_api_is_served_under_sim(settings: Settings) -> None:
    sim = create_sim_app(permits_per_jurisdiction=3, latency_ms=0, families=ECHO_FAMILIES)
    app = create_app(settings, mounts={SIM_PREFIX: sim})
    async with app.router.lifespan_context(app):
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://dev") as client:
            listed = await client.get("/_sim/_control/permits", params={"source": "ladbs"})
            assert listed.status_code == 200
            assert len(listed.json()["permits"]) == 3
            assert (await client.get("/developers/status.json")).status_code == 200
