"""A parametrized pytest test's failing case: the `@pytest.mark.parametrize` entry its test id names.

The 1.5B model writes its fizzbuzz tests as one `assert fizzbuzz(n) == expected` over ten cases;
a wrong expected value sits in the decorator, not in the statement the test stopped at, so it
was no value conflict to judge and no check to correct. The entry is found the way pytest names
it: each value that is a number, string, bool or None by itself, any other by argument name and
index (`test_fizzbuzz[9-expected8]`), or `pytest.param(..., id=...)`'s id.
"""

from __future__ import annotations

import ast
import textwrap
from dataclasses import dataclass


@dataclass(frozen=True)
class Case:
    start_line: int  # 1-based, inclusive: the entry's lines (it has them to itself)
    end_line: int
    names: tuple[str, ...]  # the parametrized argument names, in order


def case_of(path: str, source: str, test_id: str, line: int) -> Case | None:
    """The entry of the parametrize decorator, on the test function around `line`, that `test_id` names."""
    if not test_id.endswith("]") or "[" not in test_id:
        return None
    wanted = test_id[test_id.index("[") + 1 : -1]
    if not path.endswith(".py"):
        return None
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return None
    around = [n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))
              and n.lineno <= line <= (n.end_lineno or n.lineno)]
    if not around:
        return None
    function = max(around, key=lambda n: n.lineno)
    decorators = [d for d in function.decorator_list if _parametrize(d)]
    if len(decorators) != 1:
        return None  # stacked parametrizes combine their ids: not read here
    decorator = decorators[0]
    assert isinstance(decorator, ast.Call)
    names = _names(decorator.args[0]) if decorator.args else None
    entries = decorator.args[1] if len(decorator.args) > 1 else None
    if not names or not isinstance(entries, (ast.List, ast.Tuple)):
        return None
    matching = [e for i, e in enumerate(entries.elts) if _entry_id(e, names, i) == wanted]
    if len(matching) != 1:
        return None
    entry = matching[0]
    start, end = entry.lineno, entry.end_lineno or entry.lineno
    rows = source.splitlines()
    shared = any(other is not entry and other.lineno <= end and (other.end_lineno or other.lineno) >= start
                 for other in entries.elts)
    if shared or rows[start - 1][: entry.col_offset].strip() or not _alone_after(rows[end - 1], entry):
        return None  # the entry does not have its lines to itself
    return Case(start, end, names)


def case_values(text: str, names: tuple[str, ...]) -> dict[str, ast.expr] | None:
    """Each argument name's value node in an entry's (dedented) lines, `(9, [...]),` or `pytest.param(...)`."""
    source = textwrap.dedent(text)
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return None
    if len(tree.body) != 1 or not isinstance(tree.body[0], ast.Expr):
        return None
    value = tree.body[0].value
    if isinstance(value, ast.Tuple) and len(value.elts) == 1 and \
            (ast.get_source_segment(source, value) or "").rstrip().endswith(","):
        value = value.elts[0]  # the entry's trailing comma made a tuple around it
    values = _values(value, len(names))
    return dict(zip(names, values, strict=True)) if values is not None else None


def _values(entry: ast.expr, count: int) -> list[ast.expr] | None:
    if isinstance(entry, ast.Call) and ast.unparse(entry.func).endswith("param"):
        return list(entry.args) if len(entry.args) == count else None
    if count == 1:
        return [entry]
    return list(entry.elts) if isinstance(entry, ast.Tuple) and len(entry.elts) == count else None


def _parametrize(node: ast.expr) -> bool:
    return isinstance(node, ast.Call) and ast.unparse(node.func).endswith("mark.parametrize")


def _names(node: ast.expr) -> tuple[str, ...] | None:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return tuple(n.strip() for n in node.value.split(",") if n.strip())
    if isinstance(node, (ast.List, ast.Tuple)) and all(isinstance(e, ast.Constant) and isinstance(e.value, str)
                                                       for e in node.elts):
        return tuple(str(e.value) for e in node.elts)  # type: ignore[attr-defined]
    return None


def _entry_id(entry: ast.expr, names: tuple[str, ...], index: int) -> str | None:
    """The id pytest gives the entry (None when greenloop cannot tell it)."""
    if isinstance(entry, ast.Call) and ast.unparse(entry.func).endswith("param"):
        given = next((k.value for k in entry.keywords if k.arg == "id"), None)
        if isinstance(given, ast.Constant) and isinstance(given.value, str):
            return given.value
    values = _values(entry, len(names))
    if values is None:
        return None
    return "-".join(_value_id(v, name, index) for v, name in zip(values, names, strict=True))


def _value_id(node: ast.expr, name: str, index: int) -> str:
    try:
        value = ast.literal_eval(node)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return f"{name}{index}"
    if isinstance(value, str):
        return value.encode("unicode_escape").decode("ascii")
    if isinstance(value, (bool, int, float)) or value is None:
        return str(value)
    return f"{name}{index}"


def _alone_after(row: str, entry: ast.expr) -> bool:
    """Nothing but a comma (and a comment) after the entry on its last line."""
    rest = row.encode("utf-8")[entry.end_col_offset or 0 :].decode("utf-8", "replace").strip()
    return rest in ("", ",") or rest.lstrip(",").strip().startswith("#")
