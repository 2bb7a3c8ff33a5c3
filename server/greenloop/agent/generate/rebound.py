"""A function's local that rebinds a module-level name the same function calls first, renamed.

The 1.5B model's word-count test wrote `top_words = top_words(text, 2)` after `from wordcount
import top_words`: assigning the name anywhere in the function makes it local there, so the call
raised UnboundLocalError and the test failed before its check ran, with the code right. The
intent is plain: the call means the module's function, the stored name the result. So in such a
function the local (its stores and the loads that are not calls) is renamed to `result`, or
`<name>_result` when the function already uses `result`; the calls keep the module's name.
Nothing changes where the name is declared `global`/`nonlocal`, or where no call of it comes
before the first store (the function then means the local throughout).
"""

from __future__ import annotations

import ast
import re

from greenloop.agent.generate.pysource import python_tree

_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)
_ROWS = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+$")  # lines as python counts them, endings kept


def rename_rebound(path: str, text: str) -> str:
    """`text` with each function's local that shadows a module-level name it calls first renamed."""
    tree = python_tree(path, text)
    if tree is None:
        return text
    module = _module_names(tree)
    spans: list[tuple[int, int, int, str]] = []  # (line, start byte, end byte, new name)
    for function in (n for n in ast.walk(tree) if isinstance(n, _FUNCTIONS)):
        spans += _renames(function, module)
    if not spans:
        return text
    rows = _ROWS.findall(text)
    for line, start, end, name in sorted(spans, reverse=True):  # right to left: offsets stay true
        raw = rows[line - 1].encode()
        rows[line - 1] = (raw[:start] + name.encode() + raw[end:]).decode()
    return "".join(rows)


def _module_names(tree: ast.Module) -> set[str]:
    """The names the module's top level binds by import or definition."""
    names: set[str] = set()
    for node in tree.body:
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            names.update((a.asname or a.name).split(".")[0] for a in node.names)
        elif isinstance(node, (*_FUNCTIONS, ast.ClassDef)):
            names.add(node.name)
    return names


def _own(function: ast.AST) -> list[ast.AST]:
    """`function`'s body nodes, nested functions, classes and lambdas left out (their own scopes)."""
    found: list[ast.AST] = []
    stack = list(getattr(function, "body", []))
    while stack:
        node = stack.pop()
        found.append(node)
        if isinstance(node, (*_FUNCTIONS, ast.ClassDef, ast.Lambda)):
            continue
        stack.extend(ast.iter_child_nodes(node))
    return found


def _renames(function: ast.FunctionDef | ast.AsyncFunctionDef, module: set[str]) -> list[tuple[int, int, int, str]]:
    nodes = _own(function)
    declared = {n for node in nodes if isinstance(node, (ast.Global, ast.Nonlocal)) for n in node.names}
    params = {a.arg for a in ast.walk(function.args) if isinstance(a, ast.arg)}
    names = [n for n in nodes if isinstance(n, ast.Name)]
    used = {n.id for n in names} | params
    called = {id(n.func) for n in nodes if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)}
    spans: list[tuple[int, int, int, str]] = []
    for name in sorted({n.id for n in names if isinstance(n.ctx, ast.Store)} & module - declared - params):
        stores = [n for n in names if n.id == name and isinstance(n.ctx, ast.Store)]
        first = min(_statement_start(s, nodes) for s in stores)
        calls = [n for n in names if n.id == name and id(n) in called]
        if not any(_position(c) <= first or _inside_value(c, stores, nodes) for c in calls):
            continue
        new = "result" if "result" not in used else f"{name}_result"
        while new in used or new in module:
            new += "_"
        used.add(new)
        spans += [(n.lineno, n.col_offset, n.end_col_offset or n.col_offset, new)
                  for n in names if n.id == name and id(n) not in called]
    return spans


def _position(node: ast.AST) -> tuple[int, int]:
    return getattr(node, "lineno", 0), getattr(node, "col_offset", 0)


def _statement_start(store: ast.Name, nodes: list[ast.AST]) -> tuple[int, int]:
    """Where the statement holding `store` starts (its value is evaluated before the store)."""
    holders = [n for n in nodes if isinstance(n, ast.stmt) and _holds(n, store)]
    return min((_position(h) for h in holders if not isinstance(h, (ast.If, ast.For, ast.While, ast.With,
                                                                      ast.Try, ast.AsyncFor, ast.AsyncWith))),
               default=_position(store))


def _holds(statement: ast.stmt, node: ast.AST) -> bool:
    return any(child is node for child in ast.walk(statement))


def _inside_value(call: ast.Name, stores: list[ast.Name], nodes: list[ast.AST]) -> bool:
    """Whether `call` is in the value of an assignment whose target stores the name (`x = x(...)`)."""
    for node in nodes:
        if isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)) and node.value is not None \
                and _holds(node, call) and any(_holds(node, s) for s in stores):
            return True
    return False
