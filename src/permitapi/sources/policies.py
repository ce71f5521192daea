"""Source HTTP policies from settings: defaults, then platform overrides, then slug overrides."""

from __future__ import annotations

from permitapi.config import Settings
from permitapi.sources.http import SourcePolicy
from permitapi.sources.registry import Directory


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
        policy = base.with_overrides(_typed(overrides.get(item.platform, {})))
        policies[item.slug] = policy.with_overrides(_typed(overrides.get(item.slug, {})))
    return policies


def _typed(values: dict[str, float]) -> dict[str, float | int]:
    # JSON numbers arrive as floats; counts and sizes are ints in SourcePolicy.
    ints = {"max_attempts", "max_concurrency", "max_response_bytes", "circuit_failure_threshold"}
    return {name: int(v) if name in ints else float(v) for name, v in values.items()}
