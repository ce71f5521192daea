"""Test doubles for the shared sources core: a real loopback server runner, and a minimal
simulated family + adapter pair ("echo") so the core can be exercised before, and independently
of, the real ladbs/epicla/aca families."""

from __future__ import annotations

import socket
import threading
import time
from datetime import date
from random import Random
from typing import Any

import uvicorn
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, Response
from starlette.routing import BaseRoute, Route
from starlette.types import ASGIApp

from permitapi.portalsim.faults import generic_maintenance_page, render_generic_fault
from permitapi.portalsim.store import SimStore
from permitapi.sources.base import (
    HealthProbe,
    NormalizedStatus,
    NotFoundAtSource,
    PermitSnapshot,
    SearchCriteria,
    SearchNotSupported,
    SearchPage,
)
from permitapi.sources.http import PortalHttp
from permitapi.sources.pages import classify_page
from permitapi.sources.registry import Directory, Jurisdiction

ECHO_HOST = "www.ladbsservices2.lacity.org"  # the ladbs jurisdiction's real host
ECHO_STATUSES = {"Issued": NormalizedStatus.ISSUED, "Permit Finaled": NormalizedStatus.FINALED}


class LoopbackServer:
    """Runs an ASGI app on 127.0.0.1:<free port> in a background thread."""

    def __init__(self, app: ASGIApp) -> None:
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            self.port = probe.getsockname()[1]
        config = uvicorn.Config(
            app, host="127.0.0.1", port=self.port, log_level="warning", lifespan="off"
        )
        self._server = uvicorn.Server(config)
        self._thread = threading.Thread(target=self._server.run, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def __enter__(self) -> LoopbackServer:
        self._thread.start()
        deadline = time.monotonic() + 10
        while not self._server.started:
            if time.monotonic() > deadline:
                raise RuntimeError("loopback server did not start")
            time.sleep(0.02)
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.should_exit = True
        self._thread.join(timeout=10)


class EchoFamily:
    """A minimal SimFamily serving `/<ladbs host>/echo/<number>` as JSON."""

    family = "ladbs"
    default_latency_ms = 0

    def generate(
        self, jurisdiction: Jurisdiction, rng: Random, count: int, today: date
    ) -> list[PermitSnapshot]:
        permits = []
        for _ in range(count):
            first, second, third = (
                rng.randint(10000, 26999),
                rng.randint(10000, 99999),
                rng.randint(0, 99999),
            )
            number = f"{first}-{second}-{third:05d}"
            raw = rng.choice(sorted(ECHO_STATUSES))
            permits.append(
                PermitSnapshot(
                    jurisdiction=jurisdiction.slug,
                    permit_number=number,
                    raw_status=raw,
                    status=ECHO_STATUSES[raw],
                )
            )
        return permits

    def normalize_status(self, jurisdiction: Jurisdiction, raw: str) -> NormalizedStatus:
        return ECHO_STATUSES.get(raw, NormalizedStatus.UNKNOWN)

    def routes(self, store: SimStore, directory: Directory) -> list[BaseRoute]:
        async def echo(request: Request) -> Response:
            fault = store.on_request("ladbs")
            generic = await render_generic_fault(fault)
            if generic is not None:
                return generic
            if fault is not None and fault.mode == "maintenance":
                return generic_maintenance_page()
            if fault is not None and fault.mode == "blocked":
                return HTMLResponse(
                    '<html><body><form action="./Login.aspx" id="aspnetForm"></form></body></html>'
                )
            permit = store.get("ladbs", request.path_params["number"])
            if permit is None:
                return JSONResponse({"found": False}, status_code=404)
            return JSONResponse(
                {"permit_number": permit.permit_number, "status": permit.raw_status}
            )

        return [Route(f"/{ECHO_HOST}/echo/{{number}}", echo)]


ECHO_FAMILIES = {"ladbs": "tests.sources.core.support:EchoFamily"}


class EchoAdapter:
    """A minimal SourceAdapter reading EchoFamily pages through the real PortalHttp."""

    family = "ladbs"
    slow = False

    def __init__(self, http: PortalHttp) -> None:
        self.http = http

    async def fetch_permit(self, jurisdiction: Jurisdiction, permit_number: str) -> PermitSnapshot:
        url = f"https://{ECHO_HOST}/echo/{permit_number}"
        response = await self.http.request(jurisdiction.slug, "GET", url)
        classify_page(jurisdiction.slug, response.text, url=url)
        if response.status_code == 404:
            raise NotFoundAtSource(jurisdiction.slug, f"no permit {permit_number}")
        body: dict[str, Any] = response.json()
        raw = body["status"]
        return PermitSnapshot(
            jurisdiction=jurisdiction.slug,
            permit_number=body["permit_number"],
            raw_status=raw,
            status=ECHO_STATUSES.get(raw, NormalizedStatus.UNKNOWN),
        )

    async def search(self, jurisdiction: Jurisdiction, criteria: SearchCriteria) -> SearchPage:
        raise SearchNotSupported(jurisdiction.slug, "echo has no discovery")

    async def health(self, jurisdiction: Jurisdiction) -> HealthProbe:
        return HealthProbe(ok=True, detail="echo")
