"""An import of a class from its package that gets the module of the same name instead: pointed at the class.

The 1.5B model's to-do project put `class Todo` in `greenloop_todo_list/Todo.py`, wrote
`from greenloop_todo_list import Todo, TodoList` into the package's `__init__.py`, and its tests
imported the same way: that binds the modules, so all 14 tests failed on "'module' object is not
callable" and no repair round looked at an import line. Python-only: `from pkg import X`, where
`pkg/X.py` defines a public `X` and `pkg/__init__.py` does not bind `X` to something else, becomes
`from pkg.X import X` (relative imports stay relative). Left alone where the file uses `X` as the
module (`X.<a name pkg/X.py defines>`).
"""

from __future__ import annotations

import ast
from collections.abc import Mapping

from greenloop.agent.generate.pysource import python_tree
from greenloop.retrieval import public_names


def point_at_classes(path: str, text: str, known: Mapping[str, str]) -> str:
    """`text` with each `from pkg import X` that would bind the module `pkg/X.py` instead of the `X` it
    defines split off as `from pkg.X import X` (`known`: the project's files, path -> text)."""
    tree = python_tree(path, text)
    if tree is None:
        return text
    rows = text.splitlines(keepends=True)
    edits: list[tuple[int, int, str]] = []  # (first line, last line, new text), 1-based
    for node in tree.body:
        if not isinstance(node, ast.ImportFrom) or node.end_lineno is None:
            continue
        base = _base(path, node)
        if base is None or not _alone(rows, node):
            continue
        moved = [a for a in node.names if _names_class(base, a, path, tree, known)]
        if not moved:
            continue
        head = "." * node.level + (node.module or "")
        indent = " " * node.col_offset
        ending = _ending(rows[node.end_lineno - 1])
        kept = [a for a in node.names if a not in moved]
        lines = [f"{indent}from {head} import {', '.join(_alias(a) for a in kept)}{ending}"] if kept else []
        joiner = "" if head.endswith(".") else "."
        lines += [f"{indent}from {head}{joiner}{a.name} import {_alias(a)}{ending}" for a in moved]
        edits.append((node.lineno, node.end_lineno, "".join(lines)))
    for first, last, new in reversed(edits):
        rows[first - 1 : last] = [new]
    return "".join(rows)


def _base(path: str, node: ast.ImportFrom) -> str | None:
    """The folder (as a path) of the package the import names, or None when it leaves the project."""
    if node.level == 0:
        return (node.module or "").replace(".", "/") or None
    parts = path.split("/")[:-1]  # the importing file's package folder
    if node.level - 1 > len(parts):
        return None
    parts = parts[: len(parts) - (node.level - 1)]
    if node.module:
        parts += node.module.split(".")
    return "/".join(parts) or None


def _names_class(base: str, alias: ast.alias, path: str, tree: ast.Module, known: Mapping[str, str]) -> bool:
    name = alias.name
    module = f"{base}/{name}.py"
    if module == path or module not in known or name not in (defined := public_names(module, known[module])):
        return False
    init = f"{base}/__init__.py"
    if init != path and init in known and _binds(init, known[init], name):
        return False  # the package hands out its own `name` (the class, or something else it chose)
    bound = alias.asname or name
    as_module = any(isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name) and n.value.id == bound
                    and n.attr in defined for n in ast.walk(tree))
    return not as_module


def _binds(path: str, text: str, name: str) -> bool:
    """Whether a package's `__init__.py` binds `name` other than by importing its own submodule `name`."""
    tree = python_tree(path, text)
    if tree is None:
        return False
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and node.name == name:
            return True
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == name for t in node.targets):
            return True
        if isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[-1] == name and any(
                (a.asname or a.name) == name for a in node.names):
            return True  # `from .Todo import Todo`: the class
    return False


def _alone(rows: list[str], node: ast.ImportFrom) -> bool:
    """The statement has its lines to itself (no `;` neighbours), so they can be replaced whole."""
    assert node.end_lineno is not None
    segment = "".join(rows[node.lineno - 1 : node.end_lineno])
    body = segment.split("#", 1)[0].strip()
    return body.startswith("from ") and ";" not in body and rows[node.lineno - 1][: node.col_offset].strip() == ""


def _alias(alias: ast.alias) -> str:
    return f"{alias.name} as {alias.asname}" if alias.asname else alias.name


def _ending(row: str) -> str:
    return row[len(row.rstrip("\r\n")) :] or "\n"
