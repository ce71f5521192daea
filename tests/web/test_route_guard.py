"""The route guard (web/route_guard.py) only ever skips routers that could not have matched:
for every path the application serves (and near misses), each top-level router answers the
same with and without its guard, so the same route is chosen."""

from __future__ import annotations

import re

import pytest
from fastapi import FastAPI
from fastapi.routing import _IncludedRouter
from starlette.routing import Match

from permitapi.app import create_app
from permitapi.config import Settings
from permitapi.web.route_guard import GuardedIncludedRouter, Paths

METHODS = ("GET", "POST", "PATCH", "DELETE")


@pytest.fixture(scope="module")
def app() -> FastAPI:
    return create_app(Settings(environment="test", database_url="sqlite+aiosqlite:///unused"))


def probes(app: FastAPI) -> list[str]:
    served = [route.path for route in app.routes if hasattr(route, "path")]
    served += list(app.openapi()["paths"])
    concrete = {re.sub(r"\{[^}]+\}", "x-1", path) for path in served}
    near = {path + "/" for path in concrete} | {path.rstrip("s") for path in concrete}
    other = {"/", "/nope", "/api", "/api/v1", "/api/v1/", "/api/v2/permits", "/mcp/extra"}
    return sorted(concrete | near | other)


def scope_for(path: str, method: str) -> dict[str, object]:
    return {"type": "http", "path": path, "root_path": "", "method": method, "headers": []}


def test_every_top_level_router_is_guarded(app: FastAPI) -> None:
    included = [r for r in app.router.routes if isinstance(r, _IncludedRouter)]
    assert included
    assert all(isinstance(r, GuardedIncludedRouter) for r in included)
    api = [r for r in included if r.include_context.prefix == "/api/v1"]
    assert len(api) >= 10  # each API router on its own, so each can be skipped


def test_a_guard_never_changes_what_a_router_answers(app: FastAPI) -> None:
    guarded = [r for r in app.router.routes if isinstance(r, GuardedIncludedRouter)]
    # Each router's unguarded twin is built once: building one copies the router's routes,
    # which cost far more than the matching itself when done for every probe.
    plain = {
        id(router): _IncludedRouter(
            original_router=router.original_router, include_context=router.include_context
        )
        for router in guarded
    }
    checked = skipped = 0
    for path in probes(app):
        for method in METHODS:
            for router in guarded:
                expected = plain[id(router)].matches(scope_for(path, method))[0]
                got = router.matches(scope_for(path, method))[0]
                assert got == expected, (path, method, router.literal_prefixes)
                checked += 1
                if path not in router.exact_paths and not path.startswith(router.literal_prefixes):
                    skipped += 1
                    assert got == Match.NONE
    # The guard did skip most routers for most paths: that is its point.
    assert skipped > checked / 2


def test_literal_prefixes_stop_at_the_first_parameter(app: FastAPI) -> None:
    status_router = next(
        r
        for r in app.router.routes
        if isinstance(r, GuardedIncludedRouter)
        and any(p.startswith("/api/v1/permits") for p in r.literal_prefixes)
    )
    found = Paths()
    assert found.collect(status_router.original_router, "/api/v1")
    assert "/api/v1/permits/" in found.prefixes  # /permits/{permit_number}/status
    assert all("{" not in path for path in found.prefixes | found.exact)


def test_routes_without_parameters_are_matched_by_equality(app: FastAPI) -> None:
    playground = next(
        r
        for r in app.router.routes
        if isinstance(r, GuardedIncludedRouter) and "/playground" in r.exact_paths
    )
    # The page at "/" would make "/" a prefix of every path: as an exact path it skips all.
    assert "/" in playground.exact_paths
    assert "/" not in playground.literal_prefixes
    assert playground.matches(scope_for("/bench/bare", "GET"))[0] == Match.NONE
