"""Jurisdiction directory rules."""

from __future__ import annotations

from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession

from permitapi.jurisdiction.stats import active_permits_counts
from permitapi.sources.registry import Directory


async def directory_listing(session: AsyncSession, directory: Directory) -> dict[str, Any]:
    counts = await active_permits_counts(session)
    items = [
        {
            "slug": j.slug,
            "display_name": j.display_name,
            "platform": j.platform,
            "state": j.state,
            "active_permits_count": counts.get(j.slug, 0),
        }
        for j in directory
    ]
    return {"jurisdictions": items, "total": len(items)}
