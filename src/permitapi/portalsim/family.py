"""What each simulated portal family provides to the simulator app."""

from __future__ import annotations

import random
from datetime import date
from typing import Protocol

from starlette.routing import BaseRoute

from permitapi.portalsim.store import SimStore
from permitapi.sources.base import PermitSnapshot
from permitapi.sources.registry import Directory, Jurisdiction


class SimFamily(Protocol):
    family: str  # "ladbs" | "epicla" | "aca"
    default_latency_ms: int  # realistic per-family latency; Accela slowest

    def generate(
        self, jurisdiction: Jurisdiction, rng: random.Random, count: int, today: date
    ) -> list[PermitSnapshot]:
        """Deterministic ground-truth permits for one jurisdiction (same rng -> same data)."""
        ...

    def routes(self, store: SimStore, directory: Directory) -> list[BaseRoute]:
        """Starlette routes serving this family's real paths under `/<real host>/...`.

        Every handler calls `store.on_request(slug)` first and renders a returned fault in the
        family's own way (maintenance page, login redirect, ArcGIS error JSON, ...).
        """
        ...
