"""The simulator's ACA family (with page modes) behind the real PortalHttp, and a real headless
Chromium (Debian's, found on PATH) reading its pages through that client."""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import date

import pytest
from starlette.applications import Starlette

from permitapi.portalsim.app import create_sim_app
from permitapi.portalsim.page_modes import PageModes
from permitapi.portalsim.store import SimStore
from permitapi.sources.aca.adapter import AcaAdapter
from permitapi.sources.browser.engine import BrowserEngine
from permitapi.sources.browser.reader import PageReader
from permitapi.sources.families import SIMULATORS
from permitapi.sources.http import PortalHttp
from permitapi.sources.registry import Directory, default_directory
from tests.support.portal_http import in_process_http

SIM_BASE = "http://portalsim.test"
TODAY = date(2026, 11, 22)
SCRIPTED = "aca:sandiego"
PLAIN = "aca:anaheim"


@pytest.fixture
def directory() -> Directory:
    return default_directory()


@pytest.fixture
def sim_app(directory: Directory) -> Starlette:
    return create_sim_app(
        directory,
        permits_per_jurisdiction=30,
        latency_ms=0,
        today=TODAY,
        families={"aca": SIMULATORS["aca"]},
        script_only=[SCRIPTED],
    )


@pytest.fixture
def store(sim_app: Starlette) -> SimStore:
    found: SimStore = sim_app.state.store
    return found


@pytest.fixture
def modes(sim_app: Starlette) -> PageModes:
    found: PageModes = sim_app.state.page_modes
    return found


@pytest.fixture
async def http(sim_app: Starlette) -> AsyncIterator[PortalHttp]:
    client = in_process_http(sim_app, SIM_BASE)
    yield client
    await client.aclose()


@pytest.fixture
async def engine(http: PortalHttp) -> AsyncIterator[BrowserEngine]:
    browser = BrowserEngine(http, pool_size=2, page_timeout=20.0)
    yield browser
    await browser.aclose()


@pytest.fixture
def reader(engine: BrowserEngine) -> PageReader:
    return PageReader(engine)


@pytest.fixture
def adapter(http: PortalHttp, reader: PageReader) -> AcaAdapter:
    return AcaAdapter(http, reader)
