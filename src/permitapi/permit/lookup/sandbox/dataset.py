"""The curated demo dataset (dataset.json beside this module), loaded once."""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from permitapi.sources.base import NormalizedStatus

DATASET_PATH = Path(__file__).with_name("dataset.json")


@dataclass(frozen=True, slots=True)
class DemoPermit:
    jurisdiction: str
    permit_number: str
    raw_status: str
    status: NormalizedStatus
    permit_type: str
    address: str
    work_description: str
    inspections: tuple[dict[str, Any], ...] = ()
    history: tuple[dict[str, Any], ...] = ()


@lru_cache(maxsize=1)
def raw_dataset() -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads(DATASET_PATH.read_text(encoding="utf-8"))
    return loaded


@lru_cache(maxsize=1)
def demo_permits() -> tuple[DemoPermit, ...]:
    return tuple(
        DemoPermit(
            jurisdiction=item["jurisdiction"],
            permit_number=item["permit_number"],
            raw_status=item["raw_status"],
            status=NormalizedStatus(item["status"]),
            permit_type=item["permit_type"],
            address=item["address"],
            work_description=item["work_description"],
            inspections=tuple(item.get("inspections", ())),
            history=tuple(item.get("history", ())),
        )
        for item in raw_dataset()["permits"]
    )


def example_numbers() -> dict[str, str]:
    """The numbers that show the error answers: ambiguous, not_found, unknown_format."""
    return {name: item["permit_number"] for name, item in raw_dataset()["examples"].items()}
