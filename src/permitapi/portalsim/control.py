"""The simulator's control API (tests, benchmarks and `permitapi dev` drive the portals here).

    GET    /_control/permits?source=<slug>&limit=N   {"permits": [{permit_number, jurisdiction,
                                                      status}]}  (status: raw portal status)
    GET    /_control/permits/<slug>/<number>         full ground truth (PermitSnapshot as JSON)
    PUT    /_control/permits/<slug>/<number>         create, or partially update, a permit
    DELETE /_control/permits/<slug>/<number>         the portal no longer has it
    POST   /_control/faults                          {"source": slug|"*", "mode", "latency_ms",
                                                      "count": int|null}
    DELETE /_control/faults                          clear every fault
    GET    /_control/stats                           {"requests": {slug: int}}
    POST   /_control/stats/reset                     (also clears the arrivals)
    GET    /_control/arrivals                        {"arrivals": {real host: [unix time, ...]}}

Slugs contain ':' (`aca:sandiego`); raw and percent-encoded forms are both accepted. Bad input
is a 400 JSON `{"error": ..., "detail": ...}`; an unknown permit or slug is a 404 of that shape.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from datetime import date, timedelta
from typing import Any
from urllib.parse import unquote

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import BaseRoute, Route

from permitapi.portalsim.portal_numbers import portal_number
from permitapi.portalsim.snapshots import SnapshotInputError, apply_changes, to_json
from permitapi.portalsim.store import FAULT_MODES, Fault, SimStore
from permitapi.sources.base import NormalizedStatus, PermitSnapshot
from permitapi.sources.registry import Directory, Jurisdiction

MAX_LIST_LIMIT = 10_000
DEFAULT_NEW_STATUS = "Issued"

Normalizer = Callable[[Jurisdiction, str], NormalizedStatus]


def _problem(status: int, error: str, detail: str) -> JSONResponse:
    return JSONResponse({"error": error, "detail": detail}, status_code=status)


class ControlApi:
    def __init__(
        self,
        store: SimStore,
        directory: Directory,
        normalize: Normalizer,
        today: Callable[[Jurisdiction], date],
    ) -> None:
        self.store = store
        self.directory = directory
        self.normalize = normalize
        self.today = today  # the calendar day at a jurisdiction, now

    def routes(self) -> list[BaseRoute]:
        return [
            Route("/_control/permits", self.list_permits, methods=["GET"]),
            Route(
                "/_control/permits/{slug}/{number:path}",
                self.permit,
                methods=["GET", "PUT", "DELETE"],
            ),
            Route("/_control/faults", self.faults, methods=["POST", "DELETE"]),
            Route("/_control/stats", self.stats, methods=["GET"]),
            Route("/_control/stats/reset", self.reset_stats, methods=["POST"]),
            Route("/_control/arrivals", self.arrivals, methods=["GET"]),
        ]

    def _jurisdiction(self, raw_slug: str) -> Jurisdiction | None:
        return self.directory.get(unquote(raw_slug))

    async def list_permits(self, request: Request) -> Response:
        source = request.query_params.get("source")
        raw_limit = request.query_params.get("limit", "100")
        if not raw_limit.isdigit() or not 1 <= int(raw_limit) <= MAX_LIST_LIMIT:
            return _problem(400, "invalid_limit", f"limit must be 1..{MAX_LIST_LIMIT}")
        if source is not None and self._jurisdiction(source) is None:
            return _problem(400, "unknown_source", f"unknown source {source!r}")
        slugs = [self._jurisdiction(source).slug] if source else [j.slug for j in self.directory]  # type: ignore[union-attr]
        permits: list[dict[str, str]] = []
        for slug in slugs:
            for permit in self.store.of(slug):
                if len(permits) >= int(raw_limit):
                    break
                permits.append(
                    {
                        "permit_number": permit.permit_number,
                        "jurisdiction": permit.jurisdiction,
                        "status": permit.raw_status,
                    }
                )
        return JSONResponse({"permits": permits})

    async def permit(self, request: Request) -> Response:
        jurisdiction = self._jurisdiction(request.path_params["slug"])
        if jurisdiction is None:
            return _problem(
                404, "unknown_source", f"unknown source {request.path_params['slug']!r}"
            )
        number = unquote(request.path_params["number"]).strip()
        if not number:
            return _problem(400, "invalid_permit_number", "permit number is empty")
        existing = self.store.get(jurisdiction.slug, number)
        if request.method == "GET":
            if existing is None:
                return _problem(404, "permit_not_found", f"{jurisdiction.slug} has no {number}")
            return JSONResponse(to_json(existing))
        if request.method == "DELETE":
            if not self.store.delete(jurisdiction.slug, number):
                return _problem(404, "permit_not_found", f"{jurisdiction.slug} has no {number}")
            return JSONResponse({"deleted": True})
        try:
            changes = await request.json()
        except ValueError:
            return _problem(400, "invalid_json", "the body must be a JSON object")
        if not isinstance(changes, dict):
            return _problem(400, "invalid_json", "the body must be a JSON object")
        created = existing is None
        base = existing or self._new_permit(jurisdiction, number)
        try:
            updated = apply_changes(base, changes, lambda raw: self.normalize(jurisdiction, raw))
        except SnapshotInputError as exc:
            return _problem(400, "invalid_field", str(exc))
        if not created and existing is not None and existing.permit_number != updated.permit_number:
            self.store.delete(jurisdiction.slug, existing.permit_number)
        self.store.put(updated)
        return JSONResponse(to_json(updated), status_code=201 if created else 200)

    def _new_permit(self, jurisdiction: Jurisdiction, number: str) -> PermitSnapshot:
        today = self.today(jurisdiction)
        applied = today - timedelta(days=30)
        return PermitSnapshot(
            jurisdiction=jurisdiction.slug,
            permit_number=portal_number(jurisdiction.platform.split(":")[0], number),
            raw_status=DEFAULT_NEW_STATUS,
            status=self.normalize(jurisdiction, DEFAULT_NEW_STATUS),
            status_date=today,
            permit_type="Building",
            address="100 Main St",
            work_description="Created through the simulator control API",
            applied_date=applied,
            issued_date=today,
            inspections=[],
            pending_inspections=[],
            conditions=[],
            timeline=[],
            workflow=[],
            latitude=jurisdiction.center[0],
            longitude=jurisdiction.center[1],
        )

    async def faults(self, request: Request) -> Response:
        if request.method == "DELETE":
            self.store.clear_faults()
            return JSONResponse({"faults": []})
        try:
            body = await request.json()
        except ValueError:
            return _problem(400, "invalid_json", "the body must be a JSON object")
        fault = self._parse_fault(body)
        if isinstance(fault, Response):
            return fault
        self.store.add_fault(fault)
        return JSONResponse(
            {"faults": [dataclasses.asdict(item) for item in self.store.faults]}, status_code=201
        )

    def _parse_fault(self, body: Any) -> Fault | Response:
        if not isinstance(body, dict):
            return _problem(400, "invalid_json", "the body must be a JSON object")
        unknown = set(body) - {"source", "mode", "latency_ms", "count"}
        if unknown:
            return _problem(400, "invalid_field", f"unknown fields {sorted(unknown)}")
        source = body.get("source")
        if not isinstance(source, str) or (source != "*" and self._jurisdiction(source) is None):
            return _problem(400, "invalid_source", "source must be '*' or a known slug")
        mode = body.get("mode")
        if mode not in FAULT_MODES:
            return _problem(400, "invalid_mode", f"mode must be one of {list(FAULT_MODES)}")
        latency = body.get("latency_ms", 0)
        if not isinstance(latency, int) or isinstance(latency, bool) or latency < 0:
            return _problem(400, "invalid_latency", "latency_ms must be a non-negative integer")
        count = body.get("count")
        if count is not None and (
            not isinstance(count, int) or isinstance(count, bool) or count < 1
        ):
            return _problem(400, "invalid_count", "count must be a positive integer or null")
        slug = source if source == "*" else self._jurisdiction(source).slug  # type: ignore[union-attr]
        return Fault(source=slug, mode=mode, latency_ms=latency, remaining=count)

    async def stats(self, request: Request) -> Response:
        return JSONResponse({"requests": dict(self.store.requests)})

    async def arrivals(self, request: Request) -> Response:
        """Unix times of the portal requests since the last reset, by real host."""
        return JSONResponse({"arrivals": self.store.arrivals_by_host()})

    async def reset_stats(self, request: Request) -> Response:
        self.store.reset_stats()
        return JSONResponse({"requests": {}})
