"""Which green changes are only plausible: shapes known to overfit, judged by kind and by what the change does.

Template and mutation repair makes tests pass with changes that are not the fix (Qi et al., ISSTA 2015:
exception suppression, statement deletion, special-casing; TBar and PraPR: 53-73% of their plausible
patches are right). A change is risky when its kind is one of `RISKY` (measured on the development sets,
docs/decisions/2026-11-green-and-right.md), or, for any kind, a model's reply included, when a
function it changes returns a type it did not return before (`None` from a function that returns bools)
or swallows an exception it let through before (`except ValueError: pass`), or has one of the shapes
overfit_shapes.py reads (special-casing a test's value, a deleted branch, a regex anchor dropped, a whole
function written again for a one-line failure).
"""

from __future__ import annotations

import ast
from collections.abc import Mapping

from greenloop.agent.repair.edit_kinds import shape_and_family
from greenloop.agent.repair.overfit_shapes import Evidence, module_shapes, own_nodes, shapes

RISKY = {  # kind -> what such a change does, said to the user
    "attribute default": "reads an attribute that may be missing as None",
    "loop bound changed": "changes a loop's bound",
    "none guard returning another type": "returns None early",
    "none check skipping a statement": "skips a statement when a value is None",
    "local name": "uses another variable in one place",
}
_CONSTANTS = {bool: "a bool", type(None): "None", str: "a string", int: "an int", float: "a float",
              bytes: "bytes"}
_NODES = {ast.List: "a list", ast.ListComp: "a list", ast.Dict: "a dict", ast.DictComp: "a dict", ast.Set: "a set",
          ast.SetComp: "a set", ast.Tuple: "a tuple", ast.JoinedStr: "a string", ast.Compare: "a bool"}


def risk(kind: str, before: Mapping[str, str], after: Mapping[str, str], evidence: Evidence | None = None) -> str:
    """Why a change that turned the tests green is only plausible; "" when nothing says so.

    `before` and `after`: the texts of the files it changed, as they were and as it leaves them; `evidence`:
    what the failure says (the failing tests' literals, the lines its tracebacks point at)."""
    reasons: list[str] = []
    for path in sorted(after):
        if path.endswith(".py") and before.get(path) != after.get(path):
            reasons.extend(_python_reasons(before.get(path) or "", after.get(path) or "", evidence, path))
    said = RISKY.get(shape_and_family(kind)[0], "")
    if said and not reasons:  # what the change does, said more exactly, comes first
        reasons.append(said)
    return "; ".join(dict.fromkeys(reasons))


def normal_tree(source: str) -> str | None:
    """A python module's syntax tree without docstrings or positions (two texts of one program compare
    equal); None when it does not parse."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return None
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            node.body = without_docstring(node.body) or [ast.Pass()]
    return ast.dump(tree, include_attributes=False)


def without_docstring(body: list[ast.stmt]) -> list[ast.stmt]:
    """A module's, class's or function's statements after its docstring."""
    first = body[0] if body else None
    if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) and isinstance(first.value.value, str):
        return body[1:]
    return body


def _python_reasons(before: str, after: str, evidence: Evidence | None = None, path: str = "") -> list[str]:
    old, new = functions(before), functions(after)
    out: list[str] = []
    for name, node in new.items():
        was = old.get(name)
        if was is None or ast.dump(was) == ast.dump(node):
            continue
        had, has = _returns(was), _returns(node)
        if had and (more := sorted(has - had)):
            out.append(f"returns {' or '.join(more)} where `{name}` otherwise returns {' or '.join(sorted(had))}")
        swallowed = sorted(_swallowed(node) - _swallowed(was))
        if swallowed:
            out.append(f"suppresses {', '.join(swallowed)} in `{name}`")
        out.extend(shapes(name, was, node, evidence, path, before, after))
    out.extend(module_shapes(before, after))
    return out


def functions(source: str) -> dict[str, ast.FunctionDef | ast.AsyncFunctionDef]:
    """Each function of a python module by its qualified name (`Class.method`); nested defs are part of
    their outer function. Empty when the text does not parse."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return {}
    out: dict[str, ast.FunctionDef | ast.AsyncFunctionDef] = {}

    def visit(body: list[ast.stmt], prefix: str) -> None:
        for node in body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                out[prefix + node.name] = node
            elif isinstance(node, ast.ClassDef):
                visit(node.body, f"{prefix}{node.name}.")

    visit(tree.body, "")
    return out


def _returns(function: ast.AST) -> set[str]:
    """What the function's returns give, where a return's expression says it (a literal, a comparison)."""
    out = set()
    for node in own_nodes(function):
        if not isinstance(node, ast.Return):
            continue
        value = node.value
        if value is None:
            out.add("None")
        elif isinstance(value, ast.Constant) and type(value.value) in _CONSTANTS:
            out.add(_CONSTANTS[type(value.value)])
        elif isinstance(value, ast.UnaryOp) and isinstance(value.op, ast.Not):
            out.add("a bool")
        elif type(value) in _NODES:
            out.add(_NODES[type(value)])
    return out


def _swallowed(function: ast.AST) -> set[str]:
    """Exceptions a handler of the function catches and drops (`pass`, or returns None)."""
    out = set()
    for node in own_nodes(function):
        if isinstance(node, ast.ExceptHandler) and all(
                isinstance(s, ast.Pass) or (isinstance(s, ast.Return) and (s.value is None or (
                    isinstance(s.value, ast.Constant) and s.value.value is None))) for s in node.body):
            out.add(ast.unparse(node.type) if node.type is not None else "every exception")
    return out
