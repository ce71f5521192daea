"""Print the import circles inside `permitapi`, function-level imports included (grimp counts
every import statement, wherever it is written, `if TYPE_CHECKING:` ones too).

    .venv/bin/python tools/import_circles.py

Two views, over every import (none is exempt):
- module circles: a module reaches itself through imports;
- package circles, at every level: within each package (`permitapi` itself, `permitapi.permit`,
  `permitapi.permit.lookup`, ...), its children (subpackages and modules) import one another
  round (e.g. `permitapi.event` and `permitapi.webhook`, or `permit.lookup` and
  `permit.operation`). An import counts for the child holding the importing module and the
  child holding the imported one.
Each circle is printed with the imports that close it. Exits 1 when any count is not zero.
"""

from __future__ import annotations

import sys

import grimp

ROOT = "permitapi"


def module_circles(graph: grimp.ImportGraph) -> list[list[str]]:
    """Strongly connected components of more than one module, each sorted."""
    return components({m: graph.find_modules_directly_imported_by(m) for m in graph.modules})


def packages(graph: grimp.ImportGraph) -> list[str]:
    """Every module of the graph that has children, sorted."""
    return sorted(m for m in graph.modules if graph.find_children(m))


def child_of(package: str, module: str) -> str | None:
    """The child of `package` that is or holds `module`; None when `module` is not under it."""
    prefix = package + "."
    if not module.startswith(prefix):
        return None
    return prefix + module[len(prefix) :].split(".", 1)[0]


def child_edges(graph: grimp.ImportGraph, package: str) -> dict[str, set[str]]:
    """Which children of `package` import which others, over every import between modules
    under it (an import of `package` itself, its `__init__`, belongs to no child)."""
    edges: dict[str, set[str]] = {child: set() for child in graph.find_children(package)}
    for module in graph.find_descendants(package):
        source = child_of(package, module)
        assert source is not None
        for imported in graph.find_modules_directly_imported_by(module):
            target = child_of(package, imported)
            if target is not None and target != source:
                edges.setdefault(source, set()).add(target)
    return edges


def package_circles(graph: grimp.ImportGraph) -> dict[str, list[list[str]]]:
    """For each package with one, the circles among its children (each sorted)."""
    found = {}
    for package in packages(graph):
        circles = components(child_edges(graph, package))
        if circles:
            found[package] = circles
    return found


def edges_between(graph: grimp.ImportGraph, package: str, members: list[str]) -> list[str]:
    """Each import that crosses between two children of `package` in one circle,
    `importer -> imported`."""
    found = []
    for module in sorted(graph.find_descendants(package)):
        source = child_of(package, module)
        if source not in members:
            continue
        for imported in sorted(graph.find_modules_directly_imported_by(module)):
            target = child_of(package, imported)
            if target is not None and target != source and target in members:
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
    by_package = package_circles(graph)
    count = sum(len(circles) for circles in by_package.values())
    print(
        f"package circles (children of each of the {len(packages(graph))} packages under "
        f"{ROOT}, every import): {count}"
    )
    for package, circles in by_package.items():
        for component in circles:
            print(f"  in {package}: " + " <-> ".join(component))
            for edge in edges_between(graph, package, component):
                print("      " + edge)
    return 1 if modules or count else 0


if __name__ == "__main__":
    sys.exit(main())
