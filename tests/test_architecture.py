"""Import direction, checked with grimp (every import statement counts, a function-level one
too): no module reaches itself through imports, and no two first-level packages of permitapi
import each other, a domain's router counting as part of the web layer (the exceptions of the
layers contract in pyproject.toml). The layers themselves are import-linter's contract, run by
the test command."""

from __future__ import annotations

import grimp
import pytest
from tools.import_circles import (
    ROOT,
    components,
    layer_exceptions,
    module_circles,
    package_circles,
    package_edges_between,
)


@pytest.fixture(scope="module")
def graph() -> grimp.ImportGraph:
    return grimp.build_graph(ROOT, cache_dir=None)


def test_no_module_imports_itself_through_others(graph: grimp.ImportGraph) -> None:
    assert module_circles(graph) == []


def test_no_two_packages_import_each_other(graph: grimp.ImportGraph) -> None:
    found = package_circles(graph, layer_exceptions())
    described = {" <-> ".join(circle): package_edges_between(graph, circle) for circle in found}
    assert described == {}


def test_the_check_sees_a_circle() -> None:
    # The circle finder itself: a test that cannot fail is no test.
    edges = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert components(edges) == [["a", "b", "c"]]
