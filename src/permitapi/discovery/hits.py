"""A discovery hit as clients see it: a GET /permits/search result, the `match` of a
criteria_match event and the `permit` of a permit_created event are the same fields."""

from __future__ import annotations

from typing import Any

from permitapi.sources.base import SearchHit


def hit_data(hit: SearchHit) -> dict[str, Any]:
    """The fields GET /permits/search returns, dates as YYYY-MM-DD."""
    return {
        "permit_number": hit.permit_number,
        "jurisdiction": hit.jurisdiction,
        "address": hit.address,
        "permit_type": hit.permit_type,
        "status": hit.status,
        "valuation": hit.valuation,
        "issued_date": hit.issued_date.isoformat() if hit.issued_date else None,
        "applied_date": hit.applied_date.isoformat() if hit.applied_date else None,
    }
