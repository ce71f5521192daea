"""A tiny EPIC-LA simulator app (family routes only) and an adapter talking to it over ASGI."""

from __future__ import annotations

import random
from dataclasses import dataclass
from datetime import UTC, date, datetime

import httpx
from starlette.applications import Starlette

from permitapi.kit.clock import FrozenClock
from permitapi.portalsim.epicla import EpicLaFamily
from permitapi.portalsim.store import SimStore
from permitapi.sources.epicla.adapter import EpicLaAdapter
from permitapi.sources.http import PortalHttp
from permitapi.sources.registry import Jurisdiction, default_directory
from tests.support.portal_http import in_process_http

TODAY = date(2026, 11, 22)
# 20:00 UTC is still 22 November in Los Angeles.
NOW = datetime(2026, 11, 22, 20, 0, tzinfo=UTC)


@dataclass
class Sim:
    store: SimStore
    app: Starlette
    http: PortalHttp
    adapter: EpicLaAdapter
    jurisdiction: Jurisdiction

    @property
    def client(self) -> httpx.AsyncClient:
        return httpx.AsyncClient(transport=httpx.ASGITransport(self.app), base_url="http://sim")


def build(count: int = 400, seed: int = 20261122) -> Sim:
    directory = default_directory()
    jurisdiction = directory.get("epicla")
    assert jurisdiction is not None
    family = EpicLaFamily()
    store = SimStore()
    for permit in family.generate(jurisdiction, random.Random(seed), count, TODAY):
        store.put(permit)
    app = Starlette(routes=family.routes(store, directory))
    http = in_process_http(app, "http://sim")
    return Sim(store, app, http, EpicLaAdapter(http, clock=FrozenClock(NOW)), jurisdiction)
