"""Names a generated python file uses but never binds, imported where that is mechanical: the project, typing, stdlib.

The 1.5B model's bank test used `InsufficientFunds` with an import line that left it out, and
its `TodoList.py` annotated with `Todo` without importing it: the whole suite failed on a
NameError, at collection or in every test, before any check ran, and a repair round spent itself
on it. Like an editor's "add import" quick fix (pyflakes' undefined names), an unbound name is
imported when exactly one other module of the project defines it publicly (and does not import
this file back: no import cycle), when it is one of `typing`'s names, or when it is a standard
library module used as `name.attr`, or, in a test file, the test runner's (`pytest.raises`: the
bench's stack test used it without the import, and two of its tests failed on a NameError).
"""

from __future__ import annotations

import ast
import builtins
import sys
import typing
from collections.abc import Mapping

from greenloop.agent.generate.layouts import Layout
from greenloop.agent.generate.pysource import python_tree
from greenloop.retrieval import public_names

_TYPING = {n for n in typing.__all__ if n[:1].isupper()}


def import_unbound(layout: Layout, path: str, text: str, code: Mapping[str, str], crate: str) -> str:
    """`text` with an import for each name it uses and never binds, where there is one clear place to
    import it from (`code`: the project's files written so far, path -> text)."""
    tree = python_tree(path, text)
    if tree is None:
        return text
    missing = unbound(tree)
    if not missing:
        return text
    attributes = {n.value.id for n in ast.walk(tree) if isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name)}
    homes: dict[str, list[str]] = {}  # an import line's head -> names
    for name in sorted(missing):
        modules = [p for p, t in code.items() if p != path and layout.is_source(p) and name in public_names(p, t)
                   and not layout.is_test_name(name)]
        if len(modules) == 1 and not _imports(layout, modules[0], code[modules[0]], path, crate):
            hint = layout.module_import(path, modules[0], crate)[1]
            if hint.endswith("..."):
                homes.setdefault(hint.removesuffix("..."), []).append(name)
        elif not modules and name in _TYPING:
            homes.setdefault("from typing import ", []).append(name)
        elif not modules and name in attributes and (name in sys.stdlib_module_names
                                                       or (name == layout.test_runner and layout.is_test(path))):
            homes.setdefault(f"import {name}", [])  # `json.dumps`, or a test's `pytest.raises`
    if not homes:
        return text
    lines = [head + ", ".join(names) if names else head for head, names in homes.items()]
    return with_lines(text, tree, lines)


def unbound(tree: ast.Module) -> set[str]:
    """The names the module loads where no scope that sees them binds them, builtins aside; none after a
    `*` import. Scopes are the module and each function (with what encloses it); a name bound in a
    function, such as an `import json` inside `save`, is not bound for its sibling `load`."""
    if any(isinstance(n, ast.alias) and n.name == "*" for n in ast.walk(tree)):
        return set()
    visible = set(dir(builtins)) | {"__file__", "__name__", "__doc__", "__spec__", "__path__", "__builtins__"}
    missing: set[str] = set()
    _scope(tree, visible, missing)
    return missing


def _scope(node: ast.AST, outer: set[str], missing: set[str]) -> None:
    """Check the loads of one scope (`node`'s body, nested functions aside) against what it and `outer` bind."""
    own = _binds(node)
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
        own |= {a.arg for a in ast.walk(node.args) if isinstance(a, ast.arg)}
    seen = outer | own
    for child in _within(node):
        if isinstance(child, ast.Name) and isinstance(child.ctx, ast.Load) and child.id not in seen:
            missing.add(child.id)
        elif isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            _scope(child, seen, missing)


def _within(node: ast.AST) -> list[ast.AST]:
    """The nodes of `node`'s scope: its descendants, stopping at (and including) nested functions."""
    found: list[ast.AST] = []
    stack = [c for c in ast.iter_child_nodes(node)
             if not (isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)) and c is node.args)]
    while stack:
        child = stack.pop()
        found.append(child)
        if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            stack.extend([*child.decorator_list] if not isinstance(child, ast.Lambda) else [])
            stack.extend(d for d in child.args.defaults + child.args.kw_defaults if d is not None)
            continue
        stack.extend(ast.iter_child_nodes(child))
    return found


def _binds(node: ast.AST) -> set[str]:
    """The names one scope binds: definitions, stores, imports, handlers, globals (not inside nested functions)."""
    bound: set[str] = set()
    for child in _within(node):
        if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            bound.add(child.name)
        elif isinstance(child, ast.Name) and not isinstance(child.ctx, ast.Load):
            bound.add(child.id)
        elif isinstance(child, ast.alias):
            bound.add((child.asname or child.name).split(".")[0])
        elif isinstance(child, (ast.ExceptHandler, ast.MatchAs, ast.MatchStar)) and child.name:
            bound.add(child.name)
        elif isinstance(child, ast.MatchMapping) and child.rest:
            bound.add(child.rest)
        elif isinstance(child, (ast.Global, ast.Nonlocal)):
            bound.update(child.names)
    return bound


def _imports(layout: Layout, module: str, text: str, path: str, crate: str) -> bool:
    """Whether `module` imports the file at `path` (importing from it would close a cycle)."""
    pattern = layout.module_import(module, path, crate)[0]
    return bool(pattern.search(text))


def with_lines(text: str, tree: ast.Module, lines: list[str]) -> str:
    """`text` with `lines` after its last top-level import (after the docstring when it has none), in its line endings."""
    rows = text.splitlines(keepends=True)
    newline = "\r\n" if rows and rows[0].endswith("\r\n") else "\n"
    imports = [n for n in tree.body if isinstance(n, (ast.Import, ast.ImportFrom))]
    at = (imports[-1].end_lineno or 0) if imports else 0
    first = tree.body[0] if tree.body else None
    if not imports and isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) \
            and isinstance(first.value.value, str):
        at = first.end_lineno or 0
    added = "".join(line + newline for line in lines)
    return "".join(rows[:at]) + added + "".join(rows[at:])
