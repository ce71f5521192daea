"""A real in-process HTTP path: LadbsAdapter -> PortalHttp -> ASGI -> the LADBS simulator."""

from __future__ import annotations

import random
from collections.abc import AsyncIterator
from dataclasses import dataclass
from datetime import UTC, date, datetime

import httpx
import pytest
from starlette.applications import Starlette

from permitapi.kit.clock import FrozenClock
from permitapi.portalsim.ladbs import LadbsFamily
from permitapi.portalsim.store import SimStore
from permitapi.sources.http import PortalHttp
from permitapi.sources.ladbs.adapter import LadbsAdapter
from permitapi.sources.registry import Jurisdiction, default_directory

TODAY = date(2026, 11, 20)
PERMIT_COUNT = 400


@dataclass
class LadbsSim:
    store: SimStore
    adapter: LadbsAdapter
    jurisdiction: Jurisdiction
    http: PortalHttp


@pytest.fixture
async def sim() -> AsyncIterator[LadbsSim]:
    directory = default_directory()
    jurisdiction = directory.get("ladbs")
    assert jurisdiction is not None
    family = LadbsFamily()
    store = SimStore()
    for permit in family.generate(jurisdiction, random.Random(20261120), PERMIT_COUNT, TODAY):
        store.put(permit)
    app = Starlette(routes=family.routes(store, directory))
    http = PortalHttp(portal_base_url="http://portalsim", transport=httpx.ASGITransport(app=app))
    clock = FrozenClock(datetime(2026, 11, 20, 20, 0, tzinfo=UTC))  # 12:00 in Los Angeles
    yield LadbsSim(store, LadbsAdapter(http, clock=clock), jurisdiction, http)
    await http.aclose()
