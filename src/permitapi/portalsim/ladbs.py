"""The simulated LADBS portal family: PCIS `PcisPermitDetail` pages and the Socrata
`/resource/<dataset>.json` endpoints of data.lacity.org, served under their real host names."""

from __future__ import annotations

import random
from datetime import UTC, date, datetime
from typing import Any
from urllib.parse import urlsplit
from zoneinfo import ZoneInfo

import orjson
from starlette.requests import Request
from starlette.responses import HTMLResponse, Response
from starlette.routing import BaseRoute, Route

from permitapi.portalsim.faults import render_generic_fault
from permitapi.portalsim.ladbs_data import generate_permits
from permitapi.portalsim.ladbs_pages import (
    ACCESS_DENIED_PAGE,
    GWH9_COLUMNS,
    INSPECTION_COLUMNS,
    MAINTENANCE_PAGE,
    inspection_rows,
    permit_row,
    render_detail,
    render_not_found,
)
from permitapi.portalsim.portal_numbers import ladbs_number
from permitapi.portalsim.soql import SoqlError, run_query
from permitapi.portalsim.store import Fault, SimStore
from permitapi.sources.base import PermitSnapshot
from permitapi.sources.registry import Directory, Jurisdiction

PCIS_DEFAULT = "https://www.ladbsservices2.lacity.org/OnlineServices/PermitReport"
SOCRATA_DEFAULT = "https://data.lacity.org"


def _json(payload: Any, status: int = 200, headers: dict[str, str] | None = None) -> Response:
    return Response(
        orjson.dumps(payload), status, headers=headers, media_type="application/json;charset=utf-8"
    )


async def _fault_response(fault: Fault | None, *, html: bool) -> Response | None:
    """Render a fault the LADBS way; None lets the request through (after any delay).

    down / timeout / slow / error are the simulator's generic ones (portalsim.faults);
    maintenance -> PCIS 200 "Service not available" page / Socrata 503 JSON, blocked -> PCIS 403
    "Access Denied" page / Socrata 429 throttle JSON.
    """
    if fault is None:
        return None
    generic = await render_generic_fault(fault)
    if generic is not None or fault.mode == "slow":
        return generic
    if fault.mode == "maintenance":
        if html:
            return HTMLResponse(MAINTENANCE_PAGE)  # PCIS answers 200 with this page
        return _json(
            {"code": "service.unavailable", "error": True,
             "message": "Service temporarily unavailable for maintenance"},
            503, {"Retry-After": "60"},
        )  # fmt: skip
    if html:
        return HTMLResponse(ACCESS_DENIED_PAGE, 403)
    return _json(
        {"code": "too_many_requests", "error": True,
         "message": "Too many requests: throttled (use an app token)"},
        429, {"Retry-After": "30"},
    )  # fmt: skip


class LadbsFamily:
    family = "ladbs"
    default_latency_ms = 350

    def __init__(self) -> None:
        # rendered Socrata rows per snapshot object (rebuilt when the store replaces it)
        self._rows: dict[int, tuple[PermitSnapshot, dict[str, Any] | None, list[dict[str, Any]]]]
        self._rows = {}

    def generate(
        self, jurisdiction: Jurisdiction, rng: random.Random, count: int, today: date
    ) -> list[PermitSnapshot]:
        return generate_permits(jurisdiction, rng, count, today)

    def routes(self, store: SimStore, directory: Directory) -> list[BaseRoute]:
        jurisdiction = next((j for j in directory if j.platform == self.family), None)
        slug = jurisdiction.slug if jurisdiction else "ladbs"
        zone = ZoneInfo(jurisdiction.timezone if jurisdiction else "America/Los_Angeles")
        endpoints = jurisdiction.endpoints if jurisdiction else {}
        pcis = urlsplit(endpoints.get("pcis", PCIS_DEFAULT))
        socrata = urlsplit(endpoints.get("socrata", SOCRATA_DEFAULT))
        datasets = {
            endpoints.get("permits_dataset", "gwh9-jnip"): "permits",
            endpoints.get("inspections_dataset", "9w5z-rg2h"): "inspections",
        }

        async def detail(request: Request) -> Response:
            faulted = await _fault_response(store.on_request(slug), html=True)
            if faulted is not None:
                return faulted
            q = request.query_params
            number = ladbs_number(f"{q.get('id1', '')}-{q.get('id2', '')}-{q.get('id3', '')}")
            snapshot = store.get(slug, number) if number else None
            if snapshot is None:
                return HTMLResponse(render_not_found())
            return HTMLResponse(render_detail(snapshot))

        async def resource(request: Request) -> Response:
            faulted = await _fault_response(store.on_request(slug), html=False)
            if faulted is not None:
                return faulted
            kind = datasets.get(request.path_params["dataset"])
            if kind is None:
                return _json(
                    {"code": "not_found", "error": True, "message": "Dataset not found"}, 404
                )
            rows, columns = self._dataset(store, slug, kind, datetime.now(UTC).astimezone(zone))
            try:
                result = run_query(rows, dict(request.query_params), columns)
            except SoqlError as exc:
                return _json(
                    {"code": exc.code, "error": True, "message": exc.message,
                     "data": {"query": str(request.url.query)}},
                    400,
                )  # fmt: skip
            return _json(result)

        return [
            Route(f"/{pcis.netloc}{pcis.path.rstrip('/')}/PcisPermitDetail", detail),
            Route(f"/{socrata.netloc}/resource/{{dataset}}.json", resource),
        ]

    def _dataset(
        self, store: SimStore, slug: str, kind: str, now: datetime
    ) -> tuple[list[dict[str, Any]], frozenset[str]]:
        refreshed = now.date()  # the city publishes on its own calendar
        permits: list[dict[str, Any]] = []
        inspections: list[dict[str, Any]] = []
        live = store.of(slug)
        for snapshot in live:
            cached = self._rows.get(id(snapshot))
            if cached is None or cached[0] is not snapshot:
                cached = (snapshot, permit_row(snapshot, refreshed), inspection_rows(snapshot))
                self._rows[id(snapshot)] = cached
            if cached[1] is not None:
                permits.append(cached[1])
            inspections.extend(cached[2])
        if len(self._rows) > 2 * len(live) + 100:  # forget replaced snapshots
            alive = {id(s) for s in live}
            self._rows = {k: v for k, v in self._rows.items() if k in alive}
        if kind == "permits":
            return permits, GWH9_COLUMNS
        return inspections, INSPECTION_COLUMNS
