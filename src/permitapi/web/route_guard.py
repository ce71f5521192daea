"""Route matching that does not grow with the route table.

FastAPI (0.165) matches a request by asking every included router in turn, and each of those
asks every one of its routes, with per-candidate bookkeeping in the scope: about 3-4 µs a
candidate, so a route near the end of the table paid ~200 µs before its handler ran (two
thirds of the bench's bare endpoint time). `guard_included_routers` gives each included
router at the application's top level a cheap test first: the literal path prefixes of
everything it contains (each route's path up to its first parameter). A request path that
starts with none of them cannot match any route of that router, fully or partially, so the
router answers NONE without asking its routes; a route without parameters matches only its
own path, so for those the test is equality. Order, matching and dispatch are FastAPI's own;
a router holding something without a path (a Host route) is left unguarded.

It relies on `fastapi.routing._IncludedRouter`, private to the pinned FastAPI: a FastAPI
upgrade that changes it fails tests/web/test_route_guard.py.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from fastapi import FastAPI
from fastapi.routing import APIRouter, _IncludedRouter
from starlette._utils import get_route_path
from starlette.routing import Match, Mount, Route, WebSocketRoute
from starlette.types import Scope


@dataclass
class GuardedIncludedRouter(_IncludedRouter):
    # Paths of routes without parameters (matched only as they are) and literal prefixes of
    # the others (and of mounts).
    exact_paths: frozenset[str] = frozenset()
    literal_prefixes: tuple[str, ...] = ()

    def matches(self, scope: Scope) -> tuple[Match, Scope]:
        path = get_route_path(scope) if scope.get("root_path") else scope["path"]
        if path not in self.exact_paths and not path.startswith(self.literal_prefixes):
            return Match.NONE, {}
        return super().matches(scope)


def guard_included_routers(app: FastAPI) -> int:
    """Replace the app's top-level included routers by guarded ones; how many were guarded."""
    guarded = 0
    routes = app.router.routes
    for index, route in enumerate(routes):
        if type(route) is not _IncludedRouter:
            continue
        found = Paths()
        if not found.collect(route.original_router, route.include_context.prefix):
            continue
        routes[index] = GuardedIncludedRouter(
            original_router=route.original_router,
            include_context=route.include_context,
            exact_paths=frozenset(found.exact),
            literal_prefixes=tuple(sorted(found.prefixes)),
        )
        guarded += 1
    return guarded


@dataclass
class Paths:
    """What paths a router can match: exact ones (routes without parameters: Starlette matches
    those as they are) and literal prefixes (up to a route's first parameter; a mount's path)."""

    exact: set[str] = field(default_factory=set)
    prefixes: set[str] = field(default_factory=set)

    def collect(self, router: APIRouter, prefix: str) -> bool:
        """Add everything under `router` included at `prefix`; False when something there
        cannot be reduced to paths (then the router is not guarded)."""
        for route in router.routes:
            if isinstance(route, _IncludedRouter):
                if not self.collect(route.original_router, prefix + route.include_context.prefix):
                    return False
            elif isinstance(route, Mount):
                self.prefixes.add(_literal(prefix + route.path))
            elif isinstance(route, Route | WebSocketRoute):
                path = prefix + route.path
                if "{" in path:
                    self.prefixes.add(_literal(path))
                else:
                    self.exact.add(path)
            else:
                return False
        return True


def _literal(path: str) -> str:
    return path.split("{", 1)[0]
