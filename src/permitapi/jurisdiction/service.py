"""Jurisdiction directory rules."""

from __future__ import annotations

from typing import Any

from permitapi.sources.registry import Directory


def directory_listing(directory: Directory) -> dict[str, Any]:
    items = [
        {
            "slug": j.slug,
            "display_name": j.display_name,
            "platform": j.platform,
            "state": j.state,
            "active_permits_count": 0,
        }
        for j in directory
    ]
    return {"jurisdictions": items, "total": len(items)}
