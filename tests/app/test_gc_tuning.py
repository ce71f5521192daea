"""The server's garbage-collector thresholds (PERMITAPI_GC_THRESHOLDS) hold for the app's
lifetime and are put back when it stops."""

from __future__ import annotations

import gc
from collections.abc import Iterator

import pytest

from permitapi.app import create_app
from permitapi.config import Settings


@pytest.fixture
def python_defaults() -> Iterator[tuple[int, int, int]]:
    before = gc.get_threshold()
    gc.set_threshold(700, 10, 10)
    try:
        yield (700, 10, 10)
    finally:
        gc.set_threshold(*before)


async def test_the_app_raises_the_thresholds_while_it_runs(
    settings: Settings, python_defaults: tuple[int, int, int]
) -> None:
    assert settings.gc_thresholds == (50_000, 20, 100)
    application = create_app(settings)
    async with application.router.lifespan_context(application):
        assert gc.get_threshold() == (50_000, 20, 100)
    assert gc.get_threshold() == python_defaults


async def test_null_keeps_the_interpreter_s_thresholds(
    settings: Settings, python_defaults: tuple[int, int, int], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PERMITAPI_GC_THRESHOLDS", "null")
    assert Settings().gc_thresholds is None
    monkeypatch.setenv("PERMITAPI_GC_THRESHOLDS", "[10000, 5, 50]")
    assert Settings().gc_thresholds == (10_000, 5, 50)
    application = create_app(settings.model_copy(update={"gc_thresholds": None}))
    async with application.router.lifespan_context(application):
        assert gc.get_threshold() == python_defaults


async def test_what_exists_at_startup_is_frozen_while_the_app_runs(
    settings: Settings, python_defaults: tuple[int, int, int]
) -> None:
    gc.unfreeze()
    application = create_app(settings)
    async with application.router.lifespan_context(application):
        # Full passes skip everything the app (and this test process) built before it ran.
        assert gc.get_freeze_count() > 10_000
    assert gc.get_freeze_count() == 0  # collectable again once the app stopped
