"""permit_created tests share the saved-search fixtures: the app in process, fake discovery
sources or the portal simulator, a real receiver on loopback, and a clean slate per test."""

from __future__ import annotations

from tests.saved_search.conftest import (  # noqa: F401 - shared fixtures
    clock,
    ctx,
    no_retry_pauses,
    receiver,
    settings,
    simulator,
    sources,
)
