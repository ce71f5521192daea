"""Route matching that does not grow with the route table.

FastAPI (0.165) matches a request by asking every included router in turn, and each of those
asks every one of its routes, with per-candidate bookkeeping in the scope: about 3-4 µs a
candidate, so a route near the end of the table paid ~200 µs before its handler ran (two
thirds of the bench's bare endpoint time). `guard_included_routers` gives each included
router at the application's top level a cheap test first: the literal path prefixes of
everything it contains (each route's path up to its first parameter). A request path that
starts with none of them cannot match any route of that router, fully or partially, so the
router answers NONE without asking its routes. Order, matching and dispatch are FastAPI's own;
a router holding something without a path (a Host route) is left unguarded.

It relies on `fastapi.routing._IncludedRouter`, private to the pinned FastAPI: a FastAPI
upgrade that changes it fails tests/foundation/test_route_guard.py.
"""

from __future__ import annotations

from dataclasses import dataclass

from fastapi import FastAPI
from fastapi.routing import APIRouter, _IncludedRouter
from starlette._utils import get_route_path
from starlette.routing import Match, Mount, Route, WebSocketRoute
from starlette.types import Scope


@dataclass
class GuardedIncludedRouter(_IncludedRouter):
    literal_prefixes: tuple[str, ...] = ()

    def matches(self, scope: Scope) -> tuple[Match, Scope]:
        if not get_route_path(scope).startswith(self.literal_prefixes):
            return Match.NONE, {}
        return super().matches(scope)


def guard_included_routers(app: FastAPI) -> int:
    """Replace the app's top-level included routers by guarded ones; how many were guarded."""
    guarded = 0
    routes = app.router.routes
    for index, route in enumerate(routes):
        if type(route) is not _IncludedRouter:
            continue
        prefixes = literal_prefixes(route.original_router, route.include_context.prefix)
        if prefixes is None:
            continue
        routes[index] = GuardedIncludedRouter(
            original_router=route.original_router,
            include_context=route.include_context,
            literal_prefixes=tuple(sorted(prefixes)),
        )
        guarded += 1
    return guarded


def literal_prefixes(router: APIRouter, prefix: str) -> set[str] | None:
    """The literal prefix of every path under `router` included at `prefix`, or None when
    something under it cannot be reduced to one."""
    found: set[str] = set()
    for route in router.routes:
        if isinstance(route, _IncludedRouter):
            inner = literal_prefixes(route.original_router, prefix + route.include_context.prefix)
            if inner is None:
                return None
            found |= inner
        elif isinstance(route, Route | WebSocketRoute | Mount):
            found.add(_literal(prefix + route.path))
        else:
            return None
    return found


def _literal(path: str) -> str:
    return path.split("{", 1)[0]
