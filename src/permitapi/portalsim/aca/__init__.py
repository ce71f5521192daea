"""The simulated Accela Citizen Access family (every `aca:<code>` agency)."""

from __future__ import annotations

import random
from datetime import date

from starlette.routing import BaseRoute

from permitapi.portalsim.aca.generate import generate_records
from permitapi.portalsim.aca.routes import aca_routes
from permitapi.portalsim.store import SimStore
from permitapi.sources.base import PermitSnapshot
from permitapi.sources.registry import Directory, Jurisdiction


class AcaFamily:
    family = "aca"
    default_latency_ms = 300  # the slowest family: WebForms pages are heavy and server-side

    def generate(
        self, jurisdiction: Jurisdiction, rng: random.Random, count: int, today: date
    ) -> list[PermitSnapshot]:
        return generate_records(jurisdiction, rng, count, today)

    def routes(self, store: SimStore, directory: Directory) -> list[BaseRoute]:
        return aca_routes(store, directory)


__all__ = ["AcaFamily"]
