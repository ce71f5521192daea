"""The simulator application: every family's portal paths plus the control API.

`create_sim_app(directory)` builds a `SimStore`, and for each family in
`permitapi.sources.families.SIMULATORS` that can be imported (a family class is instantiated
with no arguments) generates each of its jurisdictions' permits with an rng seeded from
(seed, slug), so the data set is the same on every run, and mounts `family.routes(...)`.
A family that cannot be imported yet is skipped with a warning; its portals answer 404.

Latency: each family's `default_latency_ms` is added before every portal request of that family
(recognised by the real host in the path, `/<host>/...`). `latency_ms=` overrides every
family, `family_latency_ms=` single families; tests and benches pass 0. The control API never
waits.
"""

from __future__ import annotations

import asyncio
import logging
import random
import time
from collections.abc import Callable, Iterable, Mapping
from datetime import UTC, date, datetime
from typing import Any
from urllib.parse import urlsplit
from zoneinfo import ZoneInfo

from starlette.applications import Starlette
from starlette.routing import BaseRoute
from starlette.types import ASGIApp, Receive, Scope, Send

from permitapi.portalsim import truth
from permitapi.portalsim.control import ControlApi
from permitapi.portalsim.family import SimFamily
from permitapi.portalsim.page_modes import PageModeControl, PageModeMiddleware, PageModes
from permitapi.portalsim.store import SimStore
from permitapi.sources.base import NormalizedStatus
from permitapi.sources.families import SIMULATORS, load
from permitapi.sources.registry import Directory, Jurisdiction, default_directory

log = logging.getLogger(__name__)

# Default data size: a few thousand permits in all (startup stays well under two seconds).
DEFAULT_PERMITS = {"ladbs": 400, "epicla": 300, "aca": 30}
DEFAULT_SEED = 20261122


def _load_families(paths: Mapping[str, str]) -> tuple[dict[str, SimFamily], dict[str, str]]:
    loaded: dict[str, SimFamily] = {}
    skipped: dict[str, str] = {}
    for name, path in paths.items():
        module_name = path.partition(":")[0]
        try:
            loaded[name] = load(path)()
        except ModuleNotFoundError as exc:
            # Only the family module itself being absent is "not landed yet"; a failing import
            # inside an existing family is a bug and must surface.
            if exc.name is None or not module_name.startswith(exc.name):
                raise
            skipped[name] = f"module {module_name} not found"
            log.warning("portal simulator: family %s not available (%s); skipped", name, exc)
    return loaded, skipped


def _status_normalizer(name: str, family: SimFamily) -> Any:
    """How the control API maps a raw status: the family's `normalize_status(jurisdiction, raw)`
    when it has one, else the simulator's own vocabulary (`portalsim.truth`), never the
    adapter's table."""
    method = getattr(family, "normalize_status", None)
    if callable(method):
        return method
    return lambda jurisdiction, raw: truth.normalize(name, jurisdiction.slug, raw)


def _hosts_of(jurisdiction: Jurisdiction) -> set[str]:
    urls = [jurisdiction.portal_base_url, *jurisdiction.endpoints.values()]
    return {urlsplit(url).netloc.lower() for url in urls if "://" in url}


class _PortalDoor:
    """Notes each portal request's arrival (for the control API's arrivals) and adds the
    family's latency, both keyed by the `/<host>/` path prefix."""

    def __init__(self, app: ASGIApp, store: SimStore, latency_by_host: Mapping[str, int]) -> None:
        self.app = app
        self.store = store
        self.latency_by_host = dict(latency_by_host)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            host = scope["path"].lstrip("/").split("/", 1)[0].lower()
            if host in self.latency_by_host:
                self.store.record_arrival(host, time.time())
            delay = self.latency_by_host.get(host, 0)
            if delay > 0:
                await asyncio.sleep(delay / 1000)
        await self.app(scope, receive, send)


def create_sim_app(
    directory: Directory | None = None,
    *,
    seed: int = DEFAULT_SEED,
    permits_per_jurisdiction: int | Mapping[str, int] | None = None,
    latency_ms: int | None = None,
    family_latency_ms: Mapping[str, int] | None = None,
    today: date | None = None,
    families: Mapping[str, str] | None = None,
    clock: Callable[[], datetime] | None = None,
    script_only: Iterable[str] = (),
) -> Starlette:
    """The portal simulator as an ASGI app; `app.state.store` is its `SimStore`.

    `permits_per_jurisdiction`: one count for every jurisdiction, or a mapping by slug or
    platform (slug wins) over the defaults (ladbs 400, epicla 300, 30 per Accela agency).
    `families` replaces `SIMULATORS` (name -> "module:Class"), for tests. `script_only` names
    jurisdictions whose record pages start as script shells (`page_modes`; also settable at
    /_control/page-modes, with the drift modes); `app.state.page_modes` holds them.

    Dates are stamped in each portal's own zone, as the portals do (LADBS and EPIC-LA in Los
    Angeles): "today" is the calendar day at the jurisdiction by `clock` (default: the real
    time), read when a permit is generated or created, unless a fixed `today` is given.
    """
    directory = directory or default_directory()
    now = clock or (lambda: datetime.now(UTC))

    def local_today(jurisdiction: Jurisdiction) -> date:
        if today is not None:
            return today
        return now().astimezone(ZoneInfo(jurisdiction.timezone)).date()

    store = SimStore()
    loaded, skipped = _load_families(families if families is not None else SIMULATORS)

    routes: list[BaseRoute] = []
    normalizers: dict[str, Any] = {}
    latency_by_host: dict[str, int] = {}
    for name, family in loaded.items():
        members = [j for j in directory if j.platform == name]
        for jurisdiction in members:
            count = _count_for(jurisdiction, permits_per_jurisdiction)
            rng = random.Random(f"{seed}:{jurisdiction.slug}")
            for permit in family.generate(jurisdiction, rng, count, local_today(jurisdiction)):
                store.put(permit)
        routes.extend(family.routes(store, directory))
        normalizers[name] = _status_normalizer(name, family)
        delay = (family_latency_ms or {}).get(name, latency_ms)
        delay = family.default_latency_ms if delay is None else delay
        for jurisdiction in members:
            for host in _hosts_of(jurisdiction):
                latency_by_host[host] = delay

    def normalize(jurisdiction: Jurisdiction, raw: str) -> NormalizedStatus:
        normalizer = normalizers.get(jurisdiction.platform)
        result: NormalizedStatus = (
            normalizer(jurisdiction, raw) if normalizer else NormalizedStatus.UNKNOWN
        )
        return result

    control = ControlApi(store, directory, normalize, local_today)
    modes = PageModes(script_only={j.slug for s in script_only if (j := directory.get(s))})
    page_control = PageModeControl(directory, modes)
    app = Starlette(routes=[*control.routes(), *page_control.routes(), *routes])
    app.state.page_modes = modes
    app.add_middleware(PageModeMiddleware, directory=directory, modes=modes)
    app.state.store = store
    app.state.directory = directory
    app.state.families = loaded
    app.state.skipped_families = skipped
    app.add_middleware(_PortalDoor, store=store, latency_by_host=latency_by_host)
    return app


def _count_for(jurisdiction: Jurisdiction, wanted: int | Mapping[str, int] | None) -> int:
    if isinstance(wanted, int):
        return wanted
    wanted = wanted or {}
    if jurisdiction.slug in wanted:
        return wanted[jurisdiction.slug]
    if jurisdiction.platform in wanted:
        return wanted[jurisdiction.platform]
    return DEFAULT_PERMITS.get(jurisdiction.platform, 30)
