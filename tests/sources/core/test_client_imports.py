"""Outbound requests must not re-run failed imports. httpcore imports `sniffio` on every
request; without the package each attempt rescanned sys.path (~1.4 ms of CPU per portal
request, found by profiling batch status). The dependency is pinned for that reason."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from importlib.machinery import ModuleSpec
from types import ModuleType

import pytest
from httpcore._synchronization import current_async_library


class CountingFinder:
    """A meta path finder that only counts the lookups reaching the import system."""

    def __init__(self) -> None:
        self.names: list[str] = []

    def find_spec(
        self, name: str, path: Sequence[str] | None, target: ModuleType | None = None
    ) -> ModuleSpec | None:
        self.names.append(name)
        return None


async def test_telling_asyncio_apart_triggers_no_import_lookups(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    assert current_async_library() == "asyncio"  # first call: whatever imports it needs
    finder = CountingFinder()
    monkeypatch.setattr(sys, "meta_path", [finder, *sys.meta_path])
    for _ in range(5):
        assert current_async_library() == "asyncio"
    assert finder.names == []
