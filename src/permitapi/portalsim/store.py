"""The simulator's state: ground-truth permits, injected faults, request counts and arrivals.

Ground truth is a `PermitSnapshot` per permit (what a perfect adapter would return), keyed by
jurisdiction slug and normalised permit number. Families render it in their wire format; the
adapters parse it back; tests compare the two field by field.
"""

from __future__ import annotations

from collections import Counter, deque
from dataclasses import dataclass
from typing import Literal

from permitapi.sources.base import PermitSnapshot

FaultMode = Literal[
    "down", "timeout", "slow", "error", "maintenance", "blocked", "reset", "garbage"
]
FAULT_MODES: tuple[FaultMode, ...] = (
    "down",
    "timeout",
    "slow",
    "error",
    "maintenance",
    "blocked",
    "reset",
    "garbage",
)
ARRIVALS_KEPT = 200_000


@dataclass(slots=True)
class Fault:
    source: str  # a jurisdiction slug, or "*" for every source
    mode: FaultMode
    latency_ms: int = 0
    remaining: int | None = None  # None: until cleared; otherwise the number of requests hit

    def applies_to(self, slug: str) -> bool:
        return self.source in ("*", slug)


def permit_key(permit_number: str) -> str:
    """Store key of a permit number: upper case, no spaces (dash placement is kept)."""
    return "".join(permit_number.split()).upper()


class SimStore:
    def __init__(self) -> None:
        self.permits: dict[str, dict[str, PermitSnapshot]] = {}
        self.faults: list[Fault] = []
        self.requests: Counter[str] = Counter()
        # When each portal request arrived (real host, Unix time): what a politeness test
        # measures. Bounded, so a long-running simulator does not grow without end.
        self.arrivals: deque[tuple[str, float]] = deque(maxlen=ARRIVALS_KEPT)

    # -- ground truth ---------------------------------------------------------------------
    def put(self, permit: PermitSnapshot) -> None:
        self.permits.setdefault(permit.jurisdiction, {})[permit_key(permit.permit_number)] = permit

    def get(self, slug: str, permit_number: str) -> PermitSnapshot | None:
        return self.permits.get(slug, {}).get(permit_key(permit_number))

    def delete(self, slug: str, permit_number: str) -> bool:
        return self.permits.get(slug, {}).pop(permit_key(permit_number), None) is not None

    def of(self, slug: str) -> list[PermitSnapshot]:
        return list(self.permits.get(slug, {}).values())

    # -- faults and counting --------------------------------------------------------------
    def add_fault(self, fault: Fault) -> None:
        self.faults.append(fault)

    def clear_faults(self) -> None:
        self.faults.clear()

    def on_request(self, slug: str) -> Fault | None:
        """Count a portal request for `slug` and return the fault that hits it, if any.

        The newest matching fault wins; a fault with a count is used up after that many hits.
        """
        self.requests[slug] += 1
        for fault in reversed(self.faults):
            if not fault.applies_to(slug):
                continue
            if fault.remaining is not None:
                fault.remaining -= 1
                if fault.remaining <= 0:
                    self.faults.remove(fault)
            return fault
        return None

    def record_arrival(self, host: str, at: float) -> None:
        self.arrivals.append((host, at))

    def arrivals_by_host(self) -> dict[str, list[float]]:
        found: dict[str, list[float]] = {}
        for host, at in self.arrivals:
            found.setdefault(host, []).append(at)
        return found

    def reset_stats(self) -> None:
        self.requests.clear()
        self.arrivals.clear()
