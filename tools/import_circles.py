"""Print the import circles inside `permitapi`, function-level imports included (grimp counts
every import statement, wherever it is written).

    .venv/bin/python tools/import_circles.py

Two views: module circles (a module reaches itself through imports) and package circles at
the first level under `permitapi` (e.g. `permitapi.event` and `permitapi.webhook` each import
the other). Package circles are counted twice: over every import, and with the imports the
layers contract in pyproject.toml ignores (a domain's router using web's helpers: routers
belong to the web layer) left out. Exits 1 when the second count or the module count is not
zero.
"""

from __future__ import annotations

import re
import sys
import tomllib
from collections.abc import Collection
from pathlib import Path

import grimp

ROOT = "permitapi"
PYPROJECT = Path(__file__).resolve().parent.parent / "pyproject.toml"


def layer_exceptions() -> list[tuple[re.Pattern[str], re.Pattern[str]]]:
    """The `ignore_imports` of the layers contract, as (importer, imported) patterns:
    import-linter's `*` is one dotted segment, `**` any number of them."""
    config = tomllib.loads(PYPROJECT.read_text())["tool"]["importlinter"]
    found = []
    for contract in config["contracts"]:
        if contract["type"] != "layers":
            continue
        for line in contract.get("ignore_imports", []):
            importer, imported = (part.strip() for part in line.split("->"))
            found.append((_pattern(importer), _pattern(imported)))
    return found


def _pattern(expression: str) -> re.Pattern[str]:
    parts = []
    for segment in expression.split("."):
        if segment == "**":
            parts.append(r"[^.]+(?:\.[^.]+)*")
        elif segment == "*":
            parts.append(r"[^.]+")
        else:
            parts.append(re.escape(segment))
    return re.compile(r"\.".join(parts) + "$")


def _ignored(
    importer: str, imported: str, exceptions: Collection[tuple[re.Pattern[str], re.Pattern[str]]]
) -> bool:
    return any(a.match(importer) and b.match(imported) for a, b in exceptions)


def top_package(module: str) -> str:
    """`permitapi.event.service` -> `permitapi.event`; a top-level module is its own."""
    return ".".join(module.split(".")[:2])


def module_circles(graph: grimp.ImportGraph) -> list[list[str]]:
    """Strongly connected components of more than one module, each sorted."""
    return components({m: graph.find_modules_directly_imported_by(m) for m in graph.modules})


def package_circles(
    graph: grimp.ImportGraph,
    exceptions: Collection[tuple[re.Pattern[str], re.Pattern[str]]] = (),
) -> list[list[str]]:
    """Circles between first-level packages, leaving out the imports `exceptions` match."""
    edges: dict[str, set[str]] = {}
    for module in graph.modules:
        source = top_package(module)
        edges.setdefault(source, set())
        for imported in graph.find_modules_directly_imported_by(module):
            target = top_package(imported)
            if target == source or not imported.startswith(ROOT + "."):
                continue
            if not _ignored(module, imported, exceptions):
                edges[source].add(target)
    return components(edges)


def package_edges_between(graph: grimp.ImportGraph, members: list[str]) -> list[str]:
    """Each import that crosses between two packages of one circle, `importer -> imported`."""
    found = []
    for module in sorted(graph.modules):
        source = top_package(module)
        if source not in members:
            continue
        for imported in sorted(graph.find_modules_directly_imported_by(module)):
            target = top_package(imported)
            if target != source and target in members:
                found.append(f"{module} -> {imported}")
    return found


def components(edges: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one node, each sorted."""
    # Tarjan's algorithm, iterative (the graph has a few hundred nodes).
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    found: list[list[str]] = []
    counter = 0
    for start in sorted(edges):
        if start in index:
            continue
        work = [(start, iter(sorted(edges.get(start, ()))))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, successors = work[-1]
            advanced = False
            for succ in successors:
                if succ not in index:
                    index[succ] = low[succ] = counter
                    counter += 1
                    stack.append(succ)
                    on_stack.add(succ)
                    work.append((succ, iter(sorted(edges.get(succ, ())))))
                    advanced = True
                    break
                if succ in on_stack:
                    low[node] = min(low[node], index[succ])
            if advanced:
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return sorted(found)


def main() -> int:
    graph = grimp.build_graph(ROOT, cache_dir=None)
    modules = module_circles(graph)
    print(f"module circles: {len(modules)}")
    for component in modules:
        print("  " + " <-> ".join(component))
    layered = package_circles(graph, layer_exceptions())
    for title, packages in (
        ("every import", package_circles(graph)),
        ("routers counted in the web layer", layered),
    ):
        print(f"package circles (first level under {ROOT}), {title}: {len(packages)}")
        for component in packages:
            print("  " + " <-> ".join(component))
            for edge in package_edges_between(graph, component):
                print("      " + edge)
    return 1 if modules or layered else 0


if __name__ == "__main__":
    sys.exit(main())
