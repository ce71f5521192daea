"""The jurisdiction directory: `jurisdictions.toml` loaded into typed, immutable records.

Jurisdictions are data, not modules: adding an Accela agency is a new table in the file.
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from types import MappingProxyType
from typing import Any

DIRECTORY_FILE = Path(__file__).with_name("jurisdictions.toml")
PLATFORMS = ("ladbs", "epicla", "aca")
CAPABILITIES = ("status_lookup", "inspections", "workflow_history", "discovery", "conditions")
CAPABILITY_VALUES = ("available", "partial", "unavailable")
# How a jurisdiction's record pages are read (permitapi.sources.browser): plain HTTP, always a
# browser, or HTTP until the page classifier sees a page only script fills.
FETCH_MODES = ("http", "browser", "auto")
# Families whose adapter reads record pages through the browser path (sources/aca's
# record_page); elsewhere a browser mode would only turn lookups into operations.
BROWSER_PLATFORMS = ("aca",)


@dataclass(frozen=True, slots=True)
class Jurisdiction:
    slug: str
    display_name: str
    platform: str
    state: str
    portal_base_url: str
    agency_code: str | None
    module: str | None
    permit_patterns: tuple[re.Pattern[str], ...]
    example_numbers: tuple[str, ...]
    browser_backed: bool
    anonymous_inspections: bool
    center: tuple[float, float]
    radius_km: float
    timezone: str
    capabilities: MappingProxyType[str, str]
    endpoints: MappingProxyType[str, str]
    verified: bool = True
    notes: str = ""
    extra: MappingProxyType[str, Any] = field(default_factory=lambda: MappingProxyType({}))
    fetch: str = "http"  # one of FETCH_MODES; the default is "auto" for Accela

    @property
    def answers_by_operation(self) -> bool:
        """A cache miss becomes an operation (202): browser-backed by the contract, or read by a
        browser when HTTP cannot complete the record (`fetch` other than "http")."""
        return self.browser_backed or self.fetch != "http"

    def matches(self, normalized_number: str) -> bool:
        return any(p.fullmatch(normalized_number) for p in self.permit_patterns)


class DirectoryError(ValueError):
    pass


def _parse(entry: dict[str, Any]) -> Jurisdiction:
    slug = entry["slug"]
    if entry["platform"] not in PLATFORMS:
        raise DirectoryError(f"{slug}: unknown platform {entry['platform']!r}")
    capabilities = dict(entry.get("capabilities", {}))
    for name in CAPABILITIES:
        value = capabilities.setdefault(name, "unavailable")
        if value not in CAPABILITY_VALUES:
            raise DirectoryError(f"{slug}: capability {name}={value!r}")
    known = {
        "slug", "display_name", "platform", "state", "portal_base_url", "agency_code", "module",
        "permit_patterns", "example_numbers", "browser_backed", "anonymous_inspections",
        "center", "radius_km", "timezone", "capabilities", "endpoints", "verified", "notes",
        "fetch",
    }  # fmt: skip
    fetch = entry.get("fetch", "auto" if entry["platform"] == "aca" else "http")
    if fetch not in FETCH_MODES:
        raise DirectoryError(f"{slug}: fetch={fetch!r} (one of {', '.join(FETCH_MODES)})")
    if fetch != "http" and entry["platform"] not in BROWSER_PLATFORMS:
        raise DirectoryError(f"{slug}: fetch={fetch!r} needs a browser-capable platform")
    lat, lon = entry["center"]
    return Jurisdiction(
        slug=slug,
        display_name=entry["display_name"],
        platform=entry["platform"],
        state=entry["state"],
        portal_base_url=entry["portal_base_url"].rstrip("/"),
        agency_code=entry.get("agency_code"),
        module=entry.get("module"),
        permit_patterns=tuple(re.compile(p) for p in entry["permit_patterns"]),
        example_numbers=tuple(entry.get("example_numbers", ())),
        browser_backed=bool(entry.get("browser_backed", False)),
        anonymous_inspections=bool(entry.get("anonymous_inspections", True)),
        center=(float(lat), float(lon)),
        radius_km=float(entry.get("radius_km", 15.0)),
        timezone=entry.get("timezone", "America/Los_Angeles"),
        capabilities=MappingProxyType(capabilities),
        endpoints=MappingProxyType(dict(entry.get("endpoints", {}))),
        verified=bool(entry.get("verified", True)),
        notes=entry.get("notes", ""),
        extra=MappingProxyType({k: v for k, v in entry.items() if k not in known}),
        fetch=fetch,
    )


class Directory:
    """All jurisdictions, by slug, in file order."""

    def __init__(self, jurisdictions: list[Jurisdiction]) -> None:
        self._by_slug: dict[str, Jurisdiction] = {}
        for item in jurisdictions:
            if item.slug in self._by_slug:
                raise DirectoryError(f"duplicate slug {item.slug}")
            self._by_slug[item.slug] = item

    def __iter__(self) -> Any:
        return iter(self._by_slug.values())

    def __len__(self) -> int:
        return len(self._by_slug)

    def get(self, slug: str) -> Jurisdiction | None:
        return self._by_slug.get(slug.strip().lower())

    def all(self) -> list[Jurisdiction]:
        return list(self._by_slug.values())


def load_directory(path: Path = DIRECTORY_FILE) -> Directory:
    with path.open("rb") as handle:
        data = tomllib.load(handle)
    return Directory([_parse(entry) for entry in data["jurisdiction"]])


@lru_cache(maxsize=1)
def default_directory() -> Directory:
    return load_directory()
