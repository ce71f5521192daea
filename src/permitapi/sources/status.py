"""Status normalisation: raw portal status -> `NormalizedStatus`, per family.

Every family owns a mapping table (its `status.py`); lookups are case- and space-insensitive.
An unmapped raw value maps to UNKNOWN and is counted, never guessed; the raw value is always
kept beside the normalised one.
"""

from __future__ import annotations

import re
import threading
from collections import Counter
from collections.abc import Mapping

from permitapi.sources.base import NormalizedStatus

NORMALIZATION_VERSION = "2026-11-22.1"

_unmapped: Counter[tuple[str, str]] = Counter()
_lock = threading.Lock()


def status_key(raw: str) -> str:
    """Case, NBSP and whitespace variants of one label compare equal."""
    return re.sub(r"\s+", " ", raw.replace("\xa0", " ")).strip().casefold()


class StatusTable:
    def __init__(self, family: str, table: Mapping[str, NormalizedStatus]) -> None:
        self.family = family
        self._table = {status_key(raw): status for raw, status in table.items()}

    def normalize(self, raw: str | None) -> NormalizedStatus:
        if raw is None or not raw.strip():
            self._count_unmapped("")
            return NormalizedStatus.UNKNOWN
        status = self._table.get(status_key(raw))
        if status is None:
            self._count_unmapped(raw.strip())
            return NormalizedStatus.UNKNOWN
        return status

    def raw_values(self) -> list[str]:
        return list(self._table)

    def _count_unmapped(self, raw: str) -> None:
        with _lock:
            _unmapped[(self.family, raw)] += 1


def unmapped_counts() -> dict[tuple[str, str], int]:
    """How often each (family, raw status) fell through to UNKNOWN in this process."""
    with _lock:
        return dict(_unmapped)
