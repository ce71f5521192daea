"""Source HTTP policies: defaults from settings, then the shipped platform defaults below, then
PERMITAPI_SOURCE_POLICIES overrides by platform, then by jurisdiction slug."""

from __future__ import annotations

from collections.abc import Mapping

from permitapi.config import Settings
from permitapi.sources.http_policy import SourcePolicy
from permitapi.sources.registry import Directory

# Shipped politeness per platform; a platform not listed keeps SourcePolicy's defaults.
PLATFORM_DEFAULTS: dict[str, dict[str, float]] = {
    # PCIS pages and Socrata (both LADBS hosts): a 25-permit batch's pages may go out together,
    # while sustained load stays about 5 request starts per second per host and process, what
    # the former 4-in-flight cap allowed at PCIS's real ~1 s latency (docs/decisions.md,
    # "Sources").
    "ladbs": {"max_concurrency": 25, "burst": 25, "requests_per_second": 5.0},
}

_INT_FIELDS = frozenset(
    {"max_attempts", "max_concurrency", "burst", "max_response_bytes", "circuit_failure_threshold"}
)


def default_policy(settings: Settings) -> SourcePolicy:
    return SourcePolicy(
        connect_timeout=settings.source_connect_timeout_seconds,
        read_timeout=settings.source_read_timeout_seconds,
        max_attempts=settings.source_max_attempts,
    )


def build_policies(settings: Settings, directory: Directory) -> dict[str, SourcePolicy]:
    """A policy per jurisdiction slug; unknown override keys or fields raise ValueError."""
    base = default_policy(settings)
    overrides = settings.source_policies
    known = {item.slug for item in directory} | {item.platform for item in directory}
    unknown = set(overrides) - known
    if unknown:
        raise ValueError(f"source_policies names unknown sources: {sorted(unknown)}")
    policies = {}
    for item in directory:
        layers = (
            PLATFORM_DEFAULTS.get(item.platform, {}),
            overrides.get(item.platform, {}),
            overrides.get(item.slug, {}),
        )
        policy = base
        for layer in layers:
            policy = policy.with_overrides(_typed(layer))
        policies[item.slug] = policy
    return policies


def _typed(values: Mapping[str, float]) -> dict[str, float | int]:
    # JSON numbers arrive as floats; counts and sizes are ints in SourcePolicy.
    return {name: int(v) if name in _INT_FIELDS else float(v) for name, v in values.items()}
