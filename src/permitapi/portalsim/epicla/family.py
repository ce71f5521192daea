"""The simulated EPIC-LA portal: the ArcGIS Case History layer and the EnerGov Self Service API,
each under its real host name.

Faults (`SimStore.on_request`) are rendered the way these systems fail: ArcGIS answers
maintenance and token walls with its JSON error envelope, EnerGov with HTML pages. `down`,
`timeout`, `slow` and `error` get minimal generic handling here (502, a delayed 504, a delay,
a 500) until the simulator core offers shared helpers.
"""

from __future__ import annotations

import random
from datetime import date
from typing import Any
from urllib.parse import parse_qsl, urlsplit

import orjson
from starlette.requests import Request
from starlette.responses import HTMLResponse, Response
from starlette.routing import BaseRoute, Route

from permitapi.portalsim.epicla import data, wire
from permitapi.portalsim.epicla.query import QueryError, Row, error_envelope, run_query
from permitapi.portalsim.faults import render_generic_fault
from permitapi.portalsim.store import Fault, SimStore, permit_key
from permitapi.sources.base import PermitSnapshot
from permitapi.sources.registry import Directory, Jurisdiction

JSON = "application/json; charset=utf-8"
MAINTENANCE_HTML = (
    "<html><head><title>EPIC-LA - Scheduled Maintenance</title></head><body>"
    "<h1>EPIC-LA is temporarily unavailable</h1><p>The system is undergoing scheduled "
    "maintenance. Please try again later.</p></body></html>"
)
LOGIN_HTML = (
    "<html><head><title>Login</title></head><body><form action='/energov_prod/SelfService/"
    "#/login'><input name='username'/><input type='password' name='password'/></form>"
    "</body></html>"
)


def _json(payload: Any, status: int = 200) -> Response:
    return Response(orjson.dumps(payload), status_code=status, media_type=JSON)


async def render_fault(fault: Fault | None, surface: str) -> Response | None:
    """The response a fault produces on `surface` ("arcgis" | "energov"), or None to serve."""
    if fault is None:
        return None
    generic = await render_generic_fault(fault)  # down / timeout / slow / error
    if generic is not None or fault.mode == "slow":
        return generic
    if fault.mode == "maintenance":
        if surface == "arcgis":
            return _json(error_envelope(503, "Service unavailable: under maintenance.", []))
        return HTMLResponse(MAINTENANCE_HTML, status_code=503)
    # blocked
    if surface == "arcgis":
        # ArcGIS answers errors, a missing token included, with HTTP 200 and an error envelope.
        return _json(error_envelope(499, "Token Required", []))
    return HTMLResponse(LOGIN_HTML, status_code=403)


def _path(url: str) -> str:
    parts = urlsplit(url)
    return f"/{parts.netloc}{parts.path.rstrip('/')}"


class _Portal:
    def __init__(self, store: SimStore, jurisdiction: Jurisdiction) -> None:
        self.store = store
        self.slug = jurisdiction.slug
        self.layer = _path(jurisdiction.endpoints["arcgis_layer"])
        self.energov = _path(jurisdiction.endpoints.get("energov", jurisdiction.portal_base_url))

    def routes(self) -> list[BaseRoute]:
        api = f"{self.energov}/api/energov"
        return [
            Route(f"{self.layer}/query", self.arcgis_query, methods=["GET", "POST"]),
            Route(f"{api}/search/search", self.energov_search, methods=["POST"]),
            Route(f"{api}/case/{{case_id}}/workflow", self.energov_workflow, methods=["GET"]),
            Route(f"{api}/case/{{case_id}}/inspections", self.energov_inspections, methods=["GET"]),
        ]

    # -- ArcGIS -----------------------------------------------------------------------------
    async def arcgis_query(self, request: Request) -> Response:
        fault = await render_fault(self.store.on_request(self.slug), "arcgis")
        if fault is not None:
            return fault
        params = dict(request.query_params)
        if request.method == "POST":
            # Form posts (long where clauses); parsed by hand, no multipart dependency.
            params.update(parse_qsl((await request.body()).decode(), keep_blank_values=True))
        rows = [Row(wire.attributes(p), p.latitude, p.longitude) for p in self.store.of(self.slug)]
        try:
            return _json(run_query(params, rows))
        except QueryError as exc:
            message = "Cannot perform query. Invalid query parameters."
            return _json(error_envelope(400, message, [exc.detail]))

    # -- EnerGov ----------------------------------------------------------------------------
    async def _energov_gate(self, request: Request) -> Response | None:
        fault = await render_fault(self.store.on_request(self.slug), "energov")
        if fault is not None:
            return fault
        if "tenantid" not in {name.lower() for name in request.headers}:
            # What EnerGov does without its tenant header.
            return HTMLResponse("<h1>500 Internal Server Error</h1>", status_code=500)
        return None

    def _by_case_id(self, case_id: str) -> PermitSnapshot | None:
        return next(
            (p for p in self.store.of(self.slug) if wire.case_id(p.permit_number) == case_id),
            None,
        )

    async def energov_search(self, request: Request) -> Response:
        refused = await self._energov_gate(request)
        if refused is not None:
            return refused
        try:
            body = orjson.loads(await request.body())
            criteria = body.get("PermitCriteria") or {}
            number = str(criteria.get("PermitNumber") or body.get("Keyword") or "")
        except (orjson.JSONDecodeError, AttributeError):
            return _json({"Message": "The request is invalid."}, status=400)
        permit = self.store.get(self.slug, number) if number else None
        found = (
            [wire.search_entity(permit)]
            if permit is not None
            and permit_key(permit.permit_number) == permit_key(number)
            and wire.known_to_energov(permit)
            else []
        )
        return _json(
            wire.envelope(
                {
                    "EntityResults": found,
                    "TotalPages": 1 if found else 0,
                    "PermitsFound": len(found),
                    "PlansFound": 0,
                    "InspectionsFound": 0,
                    "TotalFound": len(found),
                }
            )
        )

    async def energov_workflow(self, request: Request) -> Response:
        refused = await self._energov_gate(request)
        if refused is not None:
            return refused
        permit = self._by_case_id(request.path_params["case_id"])
        if permit is None or permit.workflow is None:
            return HTMLResponse("<h1>404 Not Found</h1>", status_code=404)
        return _json(wire.workflow(permit))

    async def energov_inspections(self, request: Request) -> Response:
        refused = await self._energov_gate(request)
        if refused is not None:
            return refused
        permit = self._by_case_id(request.path_params["case_id"])
        if permit is None or permit.inspections is None:
            return HTMLResponse("<h1>404 Not Found</h1>", status_code=404)
        return _json(wire.inspections(permit))


class EpicLaFamily:
    """SimFamily for EPIC-LA (LA County Public Works)."""

    family = "epicla"
    default_latency_ms = 150  # ArcGIS Online answers quickly; EnerGov is slower but optional

    def generate(
        self, jurisdiction: Jurisdiction, rng: random.Random, count: int, today: date
    ) -> list[PermitSnapshot]:
        return data.generate(jurisdiction, rng, count, today)

    def routes(self, store: SimStore, directory: Directory) -> list[BaseRoute]:
        routes: list[BaseRoute] = []
        for jurisdiction in directory:
            if jurisdiction.platform == "epicla" and "arcgis_layer" in jurisdiction.endpoints:
                routes.extend(_Portal(store, jurisdiction).routes())
        return routes
