"""No import circles between the modules of greenloop and greenloop_sandbox, read from the source with `ast`.

Every import counts: at module level, inside functions (an import inside a function that closes a circle still
ties the two modules together; it only moves the failure from import time to call time), and under
`if TYPE_CHECKING:` (it never runs, but two modules that need each other's types are one circle of concepts:
the shared type belongs lower down). Relative imports are resolved against their package. Imports made by name
at run time (`importlib`) are not seen. A package's `__init__.py` counts as the module `pkg` (an edge to it
only when something is imported from `pkg` itself, not when a submodule is).
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("server/greenloop", "sandbox/greenloop_sandbox")

# The circles that remain: each a strongly connected set of modules (every one reaches every other), with the
# imports that close it. None is left (issue 60 moved the shared types down: the sandbox's plain values to
# values.py, a value conflict to repair/value_conflict.py, a candidate's record to repair/tried.py, the focus to
# orchestration/focus.py). This list may only shrink: the test fails on a circle not listed here, and on a
# listed one that no longer exists as written (write the smaller set that remains, or drop it).
ALLOWED: list[frozenset[str]] = []


@dataclass(frozen=True)
class Edge:
    """One import: `source` imports `target` at `line`; `nested` inside a function, `typing` under TYPE_CHECKING."""

    source: str
    target: str
    line: int
    nested: bool = False
    typing: bool = False

    def __str__(self) -> str:
        where = ", inside a function" if self.nested else ""
        where += ", for types only" if self.typing else ""
        return f"{self.source} -> {self.target} (line {self.line}{where})"


def module_names(root: Path, packages: tuple[str, ...] = PACKAGES) -> dict[str, Path]:
    """Every module of `packages` by its dotted name (a package by its own name)."""
    names: dict[str, Path] = {}
    for folder in packages:
        top = (root / folder).parent
        for path in sorted((root / folder).rglob("*.py")):
            parts = path.relative_to(top).with_suffix("").parts
            names[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return names


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


Found = tuple[ast.Import | ast.ImportFrom, bool, bool]


def _imports(nodes: list[ast.AST], nested: bool = False, typing: bool = False) -> Iterator[Found]:
    """The import statements in `nodes`, each with whether it is inside a function and under TYPE_CHECKING."""
    for node in nodes:
        if isinstance(node, ast.Import | ast.ImportFrom):
            yield node, nested, typing
        elif isinstance(node, ast.If) and _is_type_checking(node.test):
            yield from _imports(list(node.body), nested, True)
            yield from _imports(list(node.orelse), nested, typing)
        else:
            inside = nested or isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
            yield from _imports(list(ast.iter_child_nodes(node)), inside, typing)


def _resolve(name: str, known: dict[str, Path]) -> str | None:
    """`name`, or the longest known module it starts with; None outside the packages."""
    parts = name.split(".")
    while parts:
        candidate = ".".join(parts)
        if candidate in known:
            return candidate
        parts.pop()
    return None


def import_edges(root: Path = ROOT, packages: tuple[str, ...] = PACKAGES) -> list[Edge]:
    """Every import from one module of `packages` to another."""
    known = module_names(root, packages)
    edges: list[Edge] = []
    for source, path in known.items():
        package = source.split(".") if path.name == "__init__.py" else source.split(".")[:-1]
        for node, nested, typing in _imports([ast.parse(path.read_text(encoding="utf-8"))]):
            if isinstance(node, ast.Import):
                wanted = [alias.name for alias in node.names]
            else:
                base = package[: len(package) - node.level + 1] if node.level else []
                module = ".".join(base + ([node.module] if node.module else []))
                # `from pkg import x`: x is the submodule pkg.x when there is one, else a name in pkg
                wanted = [f"{module}.{alias.name}" if f"{module}.{alias.name}" in known else module
                          for alias in node.names]
            for name in dict.fromkeys(wanted):
                target = _resolve(name, known)
                if target is not None and target != source:
                    edges.append(Edge(source, target, node.lineno, nested, typing))
    return edges


def circles(edges: list[Edge]) -> list[frozenset[str]]:
    """The strongly connected sets of more than one module (Tarjan's algorithm, iterative)."""
    graph: dict[str, list[str]] = {}
    for edge in edges:
        graph.setdefault(edge.source, []).append(edge.target)
        graph.setdefault(edge.target, [])
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[frozenset[str]] = []
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(graph[start]))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, targets = work[-1]
            for target in targets:
                if target not in index:
                    index[target] = low[target] = len(index)
                    stack.append(target)
                    on_stack.add(target)
                    work.append((target, iter(graph[target])))
                    break
                if target in on_stack:
                    low[node] = min(low[node], index[target])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    members = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        members.append(member)
                        if member == node:
                            break
                    if len(members) > 1:
                        found.append(frozenset(members))
    return found


def shortest_circle(members: frozenset[str], edges: list[Edge]) -> list[Edge]:
    """One shortest circle through the set's first module (by name), as the imports that close it."""
    inside = [edge for edge in edges if edge.source in members and edge.target in members]
    start = min(members)
    came: dict[str, Edge] = {}
    frontier = [start]
    while frontier:
        following = []
        for node in frontier:
            for edge in inside:
                if edge.source != node:
                    continue
                if edge.target == start:
                    path = [edge]
                    while path[0].source != start:
                        path.insert(0, came[path[0].source])
                    return path
                if edge.target not in came:
                    came[edge.target] = edge
                    following.append(edge.target)
        frontier = following
    raise AssertionError(f"{sorted(members)} is not a circle")


def describe(members: frozenset[str], edges: list[Edge]) -> str:
    path = shortest_circle(members, edges)
    return f"{len(members)} modules {sorted(members)}, e.g. " + "; ".join(str(edge) for edge in path)


def test_no_import_circles_but_the_listed_ones() -> None:
    edges = import_edges()
    found = circles(edges)
    new = [describe(members, edges) for members in found if members not in ALLOWED]
    assert not new, "import circles (move the shared types down; an import inside a function hides none):\n" + \
        "\n".join(new)


def test_every_listed_circle_still_exists() -> None:
    """The list is kept honest: a circle that was broken (or changed) comes off it."""
    found = circles(import_edges())
    gone = [sorted(members) for members in ALLOWED if members not in found]
    assert not gone, f"listed circles that no longer exist as written (remove or shrink them): {gone}"


def test_a_circle_through_an_import_inside_a_function_is_found(tmp_path: Path) -> None:
    """The detector itself, on a small package: nested, relative and TYPE_CHECKING imports all close a circle."""
    package = tmp_path / "src" / "pkg"
    (package / "sub").mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "sub" / "__init__.py").write_text("")
    (package / "a.py").write_text("from pkg.sub import b\n")
    (package / "sub" / "b.py").write_text("import json\n\n\ndef late():\n    from .. import a\n    return a\n")
    (package / "c.py").write_text("import pkg.sub\nfrom pkg.a import name\n")  # a package, then a name in a: no circle
    edges = import_edges(tmp_path, ("src/pkg",))
    assert circles(edges) == [frozenset({"pkg.a", "pkg.sub.b"})]
    assert describe(circles(edges)[0], edges) == (
        "2 modules ['pkg.a', 'pkg.sub.b'], e.g. pkg.a -> pkg.sub.b (line 1); "
        "pkg.sub.b -> pkg.a (line 5, inside a function)"
    )
    # without the import inside the function there is none; a type named under TYPE_CHECKING closes one
    (package / "sub" / "b.py").write_text("import json\n")
    assert circles(import_edges(tmp_path, ("src/pkg",))) == []
    (package / "d.py").write_text("from typing import TYPE_CHECKING\n\nif TYPE_CHECKING:\n    from . import c\n")
    (package / "a.py").write_text("import pkg.d\n\nname = 1\n")
    edges = import_edges(tmp_path, ("src/pkg",))
    assert [describe(members, edges) for members in circles(edges)] == [
        "3 modules ['pkg.a', 'pkg.c', 'pkg.d'], e.g. pkg.a -> pkg.d (line 1); "
        "pkg.d -> pkg.c (line 4, for types only); pkg.c -> pkg.a (line 2)"
    ]
