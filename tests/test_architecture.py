"""Import direction, checked with grimp over every import statement (a function-level one too,
none exempt): no module reaches itself through imports, and within every package of permitapi,
at every level, no two children (subpackages or modules) import each other round. The layers
themselves are import-linter's contract, run by the test command."""

from __future__ import annotations

import subprocess
import sys

import grimp
import pytest
from tools.import_circles import (
    ROOT,
    components,
    edges_between,
    module_circles,
    package_circles,
    packages,
)


@pytest.fixture(scope="module")
def graph() -> grimp.ImportGraph:
    return grimp.build_graph(ROOT, cache_dir=None)


def test_no_module_imports_itself_through_others(graph: grimp.ImportGraph) -> None:
    assert module_circles(graph) == []


def test_no_children_of_any_package_import_each_other(graph: grimp.ImportGraph) -> None:
    assert {ROOT, f"{ROOT}.permit", f"{ROOT}.permit.lookup"} <= set(packages(graph))
    described = {
        f"in {package}: " + " <-> ".join(circle): edges_between(graph, package, circle)
        for package, circles in package_circles(graph).items()
        for circle in circles
    }
    assert described == {}


def test_the_check_sees_a_circle() -> None:
    # The circle finder itself: a test that cannot fail is no test.
    edges = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert components(edges) == [["a", "b", "c"]]


def test_the_check_sees_a_package_circle_below_the_first_level() -> None:
    # pkg.deep.x and pkg.deep.y import each other through different modules: no module
    # circle, a package circle inside pkg.deep (and none among pkg's own children).
    graph = grimp.ImportGraph()
    for module in ("pkg", "pkg.deep", "pkg.deep.x", "pkg.deep.x.one", "pkg.deep.x.two"):
        graph.add_module(module)
    graph.add_module("pkg.deep.y")
    graph.add_module("pkg.other")
    graph.add_import(importer="pkg.deep.x.one", imported="pkg.deep.y")
    graph.add_import(importer="pkg.deep.y", imported="pkg.deep.x.two")
    graph.add_import(importer="pkg.other", imported="pkg.deep.x.one")
    assert module_circles(graph) == []
    assert package_circles(graph) == {"pkg.deep": [["pkg.deep.x", "pkg.deep.y"]]}
    assert edges_between(graph, "pkg.deep", ["pkg.deep.x", "pkg.deep.y"]) == [
        "pkg.deep.x.one -> pkg.deep.y",
        "pkg.deep.y -> pkg.deep.x.two",
    ]


def test_the_worker_starts_without_the_web_app() -> None:
    # `permitapi worker` and `jobs run` import the CLI, composition (build_context, the job
    # sources) and the runner: neither FastAPI, the app nor the MCP server, which would add
    # about a second to every worker start.
    program = (
        "import sys, permitapi.cli, permitapi.composition, permitapi.worker.runner\n"
        "print(sorted(m for m in ('fastapi', 'mcp', 'permitapi.app', 'permitapi.mcp.server')"
        " if m in sys.modules))"
    )
    done = subprocess.run(
        [sys.executable, "-c", program], capture_output=True, text=True, check=True, timeout=60
    )
    assert done.stdout.strip() == "[]"
