"""The one door from services to the portals: picks the family adapter for a jurisdiction,
calls it, and records every outcome for source health.

Services call `SourceGateway.fetch_permit` / `.search`; they never construct adapters.
Adapter construction: each family's adapter class takes the shared `PortalHttp`.
"""

from __future__ import annotations

from typing import Protocol

from permitapi.sources.base import PermitSnapshot, SearchCriteria, SearchPage, SourceAdapter
from permitapi.sources.families import ADAPTERS, load
from permitapi.sources.http import PortalHttp
from permitapi.sources.registry import Jurisdiction


class OutcomeRecorder(Protocol):
    async def record(
        self,
        source: str,
        operation: str,
        outcome: str,
        reason: str | None,
        latency_ms: float | None,
    ) -> None:
        """Persist one fetch outcome (source health). Must not raise."""
        ...


class SourceGateway:
    def __init__(self, http: PortalHttp, recorder: OutcomeRecorder | None = None) -> None:
        self.http = http
        self.recorder = recorder
        self._adapters: dict[str, SourceAdapter] = {}

    def adapter(self, jurisdiction: Jurisdiction) -> SourceAdapter:
        family = jurisdiction.platform
        if family not in self._adapters:
            self._adapters[family] = load(ADAPTERS[family])(self.http)
        return self._adapters[family]

    def register(self, family: str, adapter: SourceAdapter) -> None:
        """Use `adapter` for a family instead of loading the configured class (tests, tools)."""
        self._adapters[family] = adapter

    async def fetch_permit(self, jurisdiction: Jurisdiction, permit_number: str) -> PermitSnapshot:
        return await self.adapter(jurisdiction).fetch_permit(jurisdiction, permit_number)

    async def search(self, jurisdiction: Jurisdiction, criteria: SearchCriteria) -> SearchPage:
        return await self.adapter(jurisdiction).search(jurisdiction, criteria)
