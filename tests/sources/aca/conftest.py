"""A tiny simulator app with only the ACA family, reached through the real PortalHttp."""

from __future__ import annotations

import random
from collections.abc import AsyncIterator
from datetime import date

import pytest
from starlette.applications import Starlette

from permitapi.portalsim.aca import AcaFamily
from permitapi.portalsim.store import SimStore
from permitapi.sources.aca.adapter import AcaAdapter
from permitapi.sources.http import PortalHttp
from permitapi.sources.registry import Directory, default_directory
from tests.support.portal_http import in_process_http

SIM_BASE = "http://portalsim.test"
TODAY = date(2026, 11, 22)
# Hosted and self-hosted bases, both inspection settings, the override agencies, odd keys.
AGENCIES = ("aca:sandiego", "aca:sbc", "aca:anaheim", "aca:ftl", "aca:polkco", "aca:fresno",
            "aca:ont", "aca:kingco", "aca:bocc", "aca:leeco")  # fmt: skip


@pytest.fixture
def directory() -> Directory:
    return default_directory()


@pytest.fixture
def store(directory: Directory) -> SimStore:
    store = SimStore()
    family = AcaFamily()
    for slug in AGENCIES:
        jurisdiction = directory.get(slug)
        assert jurisdiction is not None
        rng = random.Random(f"aca-test:{slug}")
        for permit in family.generate(jurisdiction, rng, 30, TODAY):
            store.put(permit)
    return store


@pytest.fixture
def sim_app(store: SimStore, directory: Directory) -> Starlette:
    return Starlette(routes=AcaFamily().routes(store, directory))


@pytest.fixture
async def http(sim_app: Starlette) -> AsyncIterator[PortalHttp]:
    client = in_process_http(sim_app, SIM_BASE)
    yield client
    await client.aclose()


@pytest.fixture
def adapter(http: PortalHttp) -> AcaAdapter:
    return AcaAdapter(http)
