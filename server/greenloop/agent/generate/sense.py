"""Generated python tests checked for sense: a test that cannot pass whatever the code does is sent back.

Read from the AST, before the test counts: a comparison with a `pytest.raises(...)` object (the 1.5B
model wrote `assert roman_to_int('IIII') == pytest.raises(ValueError)`, and the loop spent 640 s
bending correct code towards it); an assert on constants alone; an import of a name the plan's
interfaces and the written code do not have; and an expected value that contradicts one of the
request's own examples (acceptance.py), which wins. Parametrized cases are read case by case.
"""

from __future__ import annotations

import ast
import itertools
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import PurePosixPath

from greenloop.agent.generate.examples import Example
from greenloop.retrieval import public_names

MAX_CASES = 200  # parametrized cases read per test


@dataclass(frozen=True)
class Senseless:
    """A test (its function, "" at module level) that cannot pass, and why."""

    test: str
    why: str


def senseless_tests(text: str, code: Mapping[str, str], interfaces: str, examples: Sequence[Example]) -> list[Senseless]:
    """What in the python test `text` cannot pass whatever the code does; `code` is the project's written source
    (path -> text), `interfaces` the plan's document, `examples` the request's stated examples."""
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return []  # the file step asks again for a file that does not parse
    found = _imports(tree, code, interfaces)
    stated = {e.call: e for e in examples if not e.writes}  # what a call gives or raises
    for scope, body in _scopes(tree):
        name = scope.name if isinstance(scope, (ast.FunctionDef, ast.AsyncFunctionDef)) else ""
        for why in _raises_objects(body):
            found.append(Senseless(name, why))
        for why in _constant_asserts(body):
            found.append(Senseless(name, why))
        if stated and isinstance(scope, (ast.FunctionDef, ast.AsyncFunctionDef)):
            for why in _contradictions(scope, stated):
                found.append(Senseless(name, why))
    return list(dict.fromkeys(found))


def problem(found: Sequence[Senseless]) -> str:
    """The file step's repair text for what was found ("" for nothing)."""
    if not found:
        return ""
    rows = [f"`{f.test}` {f.why}" if f.test else f.why for f in found[:4]]
    return "a test in it cannot pass whatever the code does: " + "; ".join(rows)


def without_tests(text: str, found: Sequence[Senseless]) -> str:
    """`text` without the test functions named in `found` ("" when no test would remain, or one is module level)."""
    names = {f.test for f in found}
    if "" in names:
        return ""
    tree = ast.parse(text)
    drop = {n for d in tree.body if isinstance(d, (ast.FunctionDef, ast.AsyncFunctionDef)) and d.name in names
            for n in range((d.decorator_list[0].lineno if d.decorator_list else d.lineno) - 1, d.end_lineno or d.lineno)}
    kept = [d for d in tree.body if isinstance(d, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
            and d.name not in names]
    if not kept:
        return ""
    return "".join(row for n, row in enumerate(text.splitlines(keepends=True)) if n not in drop)


def _scopes(tree: ast.Module) -> Iterator[tuple[ast.AST, list[ast.stmt]]]:
    """Module level, then each function (methods of test classes included), with its statements."""
    yield tree, [s for s in tree.body if not isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))]
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            yield node, [*node.body, *(d for d in node.decorator_list)]  # type: ignore[list-item]


def _walk(body: Sequence[ast.AST]) -> Iterator[ast.AST]:
    for statement in body:
        yield from ast.walk(statement)


def _is_raises(node: ast.AST) -> bool:
    return (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "raises"
            and isinstance(node.func.value, ast.Name) and node.func.value.id == "pytest")


def _raises_objects(body: Sequence[ast.AST]) -> Iterator[str]:
    """A `pytest.raises(E)` that is no `with` item (compared, stored, a parametrized value): never a result."""
    contexts = {id(item.context_expr) for node in _walk(body) if isinstance(node, (ast.With, ast.AsyncWith))
                for item in node.items}
    for node in _walk(body):
        if _is_raises(node) and id(node) not in contexts:
            assert isinstance(node, ast.Call)
            if len(node.args) <= 1:  # `pytest.raises(E, f, *args)` calls f itself
                yield (f"uses `{ast.unparse(node)}` as a value; no result equals it. Check an error with "
                       f"`with {ast.unparse(node)}:` around the call")
                return


def _constant_asserts(body: Sequence[ast.AST]) -> Iterator[str]:
    """An assert on literals alone (`assert 'IV' == 'IIII'`, `assert 1`): the code plays no part in it."""
    tries = [n for n in _walk(body) if isinstance(n, ast.Try)]
    in_try = {id(a) for t in tries for a in _walk(t.body) if isinstance(a, ast.Assert)}
    for node in _walk(body):
        if not isinstance(node, ast.Assert) or not _literal(node.test):
            continue
        if isinstance(node.test, ast.Constant) and not node.test.value and id(node) in in_try:
            continue  # `assert False` after a call that should have raised
        yield f"asserts `{ast.unparse(node.test)}`, which holds constants only; check what the code gives"
        return


def _literal(node: ast.expr) -> bool:
    if isinstance(node, ast.Compare):
        return all(_literal(n) for n in [node.left, *node.comparators])
    if isinstance(node, ast.BoolOp):
        return all(_literal(v) for v in node.values)
    try:
        ast.literal_eval(node)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return False
    return True


def _imports(tree: ast.Module, code: Mapping[str, str], interfaces: str) -> list[Senseless]:
    """`from <project module> import X` where neither the module's code nor the interfaces have X."""
    modules = _module_names(code)
    found: list[Senseless] = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.ImportFrom) or node.level or not node.module or node.module not in modules:
            continue
        have = modules[node.module]
        for alias in node.names:
            if alias.name != "*" and alias.name not in have and not _word(alias.name, interfaces):
                found.append(Senseless("", f"imports `{alias.name}` from `{node.module}`, which the plan's "
                                           f"interfaces do not have; use only the names they list"))
    return found


def _module_names(code: Mapping[str, str]) -> dict[str, set[str]]:
    """Each python source module (dotted) -> the names a test may import from it (a package: its modules' too)."""
    out: dict[str, set[str]] = {}
    for path, text in code.items():
        if not path.endswith(".py"):
            continue
        parts = list(PurePosixPath(path).with_suffix("").parts)
        if parts[0] == "src":
            parts = parts[1:]
        names = set(public_names(path, text)) | _bound(text)
        for depth in range(1, len(parts) + 1):  # a package hands out what its modules define, and the modules
            key = ".".join(p for p in parts[:depth] if p != "__init__")
            if key:
                out.setdefault(key, set()).update(names | ({parts[depth]} if depth < len(parts) else set()))
    return out


def _bound(text: str) -> set[str]:
    """Every name bound at a module's top level (imports and assignments too)."""
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return set()
    names: set[str] = set()
    for node in tree.body:
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            names |= {(a.asname or a.name).split(".")[0] for a in node.names}
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names |= {n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)}
    return names


def _word(name: str, text: str) -> bool:
    return bool(re.search(rf"(?<!\w){re.escape(name)}(?!\w)", text))


def _contradictions(function: ast.FunctionDef | ast.AsyncFunctionDef, stated: Mapping[str, Example]) -> Iterator[str]:
    """The checks (each parametrized case apart) that expect another result of a call the request states."""
    for case in _cases(function):
        for node in _walk(function.body):
            if isinstance(node, ast.Compare) and len(node.ops) == 1 and isinstance(node.ops[0], ast.Eq):
                for call, want in ((node.left, node.comparators[0]), (node.comparators[0], node.left)):
                    why = _against(_bound_to(call, case), _bound_to(want, case), stated, raising=False)
                    if why:
                        yield why
                        return
            raises = [i.context_expr for i in getattr(node, "items", []) if _is_raises(i.context_expr)]
            if isinstance(node, (ast.With, ast.AsyncWith)) and raises:
                kind = raises[0].args[0] if isinstance(raises[0], ast.Call) and raises[0].args else None
                error = ast.unparse(_bound_to(kind, case)).split(".")[-1] if kind is not None else ""
                for inner in _walk(node.body):
                    if isinstance(inner, ast.Call):
                        why = _against(_bound_to(inner, case), None, stated, raising=True, error=error)
                        if why:
                            yield why
                            return


def _against(call: ast.expr, want: ast.expr | None, stated: Mapping[str, Example], *, raising: bool,
             error: str = "") -> str:
    """Why a check of `call` contradicts the request's example of it ("" when it does not); `error`: the
    exception a `pytest.raises` check expects."""
    example = stated.get(ast.unparse(call)) if isinstance(call, ast.Call) else None
    if example is None:
        return ""
    said = f"the request says `{example.call}` " + (f"raises `{example.raises}`" if example.raises
                                                    else f"gives `{example.returns}`")
    if raising:
        if not example.raises:
            return f"expects `{example.call}` to raise, but {said}"
        if error and error.isidentifier() and error != example.raises:
            return f"expects `{example.call}` to raise `{error}`, but {said}"
        return ""
    if want is None or not _literal(want):
        return ""
    value = ast.literal_eval(want)
    if example.raises:
        return f"expects `{example.call}` to give `{ast.unparse(want)}`, but {said}"
    return "" if value == ast.literal_eval(example.returns) else (
        f"expects `{example.call}` to give `{ast.unparse(want)}`, but {said}")


def _cases(function: ast.FunctionDef | ast.AsyncFunctionDef) -> list[dict[str, ast.expr]]:
    """The parametrized cases of a test (name -> value), the product of its parametrize marks; [{}] when none."""
    marks: list[list[dict[str, ast.expr]]] = []
    for decorator in function.decorator_list:
        if not (isinstance(decorator, ast.Call) and ast.unparse(decorator.func).endswith("mark.parametrize")
                and len(decorator.args) >= 2):
            continue
        names_node, values = decorator.args[0], decorator.args[1]
        names = _argnames(names_node)
        if not names or not isinstance(values, (ast.List, ast.Tuple)):
            continue
        rows: list[dict[str, ast.expr]] = []
        for value in values.elts:
            if isinstance(value, ast.Call) and ast.unparse(value.func).endswith("param"):
                items = list(value.args)
            elif len(names) == 1:
                items = [value]
            elif isinstance(value, (ast.Tuple, ast.List)):
                items = list(value.elts)
            else:
                items = []
            if len(items) == len(names):
                rows.append(dict(zip(names, items, strict=True)))
        marks.append(rows)
    if not marks:
        return [{}]
    return [dict(kv for row in combo for kv in row.items())
            for combo in itertools.islice(itertools.product(*marks), MAX_CASES)]


def _argnames(node: ast.expr) -> list[str]:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return [n.strip() for n in node.value.split(",") if n.strip()]
    if isinstance(node, (ast.Tuple, ast.List)):
        return [e.value for e in node.elts if isinstance(e, ast.Constant) and isinstance(e.value, str)]
    return []


def _bound_to(node: ast.expr, case: Mapping[str, ast.expr]) -> ast.expr:
    """`node` with the case's names written as their values."""
    if not case:
        return node

    class Put(ast.NodeTransformer):
        def visit_Name(self, name: ast.Name) -> ast.expr:
            return case.get(name.id, name)

    return Put().visit(ast.parse(ast.unparse(node), mode="eval")).body
