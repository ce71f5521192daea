"""The drift canary's configured records, created on a simulator through its control API so that
every expected field is there (LADBS's record is a trade permit, as the real one is: its fields
come from the PCIS page alone)."""

from __future__ import annotations

from typing import Any

import httpx

from permitapi.sources.canary.check import load_records

SEED: dict[str, dict[str, Any]] = {"ladbs": {"permit_type": "Electrical"}, "epicla": {}, "aca": {}}
INSPECTED = [{"type": "Final", "date": "2026-11-20", "result": "Approved"}]


async def seed_canary_records(control: httpx.AsyncClient) -> None:
    for record in load_records():
        slug = record.jurisdiction.replace(":", "%3A")
        response = await control.put(
            f"/_control/permits/{slug}/{record.permit_number}",
            json={**SEED[record.family], "inspections": INSPECTED},
        )
        assert response.status_code in (200, 201), response.text
