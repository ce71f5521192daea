"""A real in-process HTTP path: LadbsAdapter -> PortalHttp -> ASGI -> the LADBS simulator."""

from __future__ import annotations

import asyncio
import random
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass
from datetime import UTC, date, datetime

import pytest
from starlette.applications import Starlette
from starlette.types import ASGIApp, Receive, Scope, Send

from permitapi.kit.clock import FrozenClock
from permitapi.portalsim.ladbs import LadbsFamily
from permitapi.portalsim.store import SimStore
from permitapi.sources.http import PortalHttp
from permitapi.sources.ladbs.adapter import LadbsAdapter
from permitapi.sources.registry import Jurisdiction, default_directory
from tests.support.portal_http import in_process_http

TODAY = date(2026, 11, 20)
PERMIT_COUNT = 400
SLOW_LATENCY = 0.1


@dataclass(frozen=True, slots=True)
class Served:
    """One request the simulator served: `PcisPermitDetail`, `gwh9-jnip` or `9w5z-rg2h`."""

    name: str
    started: float  # monotonic, when the request reached the simulator
    ended: float


class Timed:
    """Delays every request by `latency` seconds and records it (`Served`)."""

    def __init__(self, app: ASGIApp, latency: float) -> None:
        self.app = app
        self.latency = latency
        self.served: list[Served] = []

    def names(self) -> list[str]:
        return [s.name for s in self.served]

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        started = time.monotonic()
        await asyncio.sleep(self.latency)
        await self.app(scope, receive, send)
        name = scope["path"].rstrip("/").rsplit("/", 1)[-1].removesuffix(".json")
        self.served.append(Served(name, started, time.monotonic()))


@dataclass
class LadbsSim:
    store: SimStore
    adapter: LadbsAdapter
    jurisdiction: Jurisdiction
    http: PortalHttp
    timed: Timed


async def _sim(latency: float) -> AsyncIterator[LadbsSim]:
    directory = default_directory()
    jurisdiction = directory.get("ladbs")
    assert jurisdiction is not None
    family = LadbsFamily()
    store = SimStore()
    for permit in family.generate(jurisdiction, random.Random(20261120), PERMIT_COUNT, TODAY):
        store.put(permit)
    timed = Timed(Starlette(routes=family.routes(store, directory)), latency)
    http = in_process_http(timed)
    clock = FrozenClock(datetime(2026, 11, 20, 20, 0, tzinfo=UTC))  # 12:00 in Los Angeles
    yield LadbsSim(store, LadbsAdapter(http, clock=clock), jurisdiction, http, timed)
    await http.aclose()


@pytest.fixture
async def sim() -> AsyncIterator[LadbsSim]:
    async for running in _sim(latency=0.0):
        yield running


@pytest.fixture
async def slow_sim() -> AsyncIterator[LadbsSim]:
    """Every portal request takes SLOW_LATENCY seconds (round trips become measurable)."""
    async for running in _sim(latency=SLOW_LATENCY):
        yield running
