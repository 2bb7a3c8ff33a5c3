"""Value conflicts in tests written with the code: what must the call give? The answer decides which side is wrong.

When generation writes the tests together with the code, a failing `assert f(x) == want` is a
conflict between two answers of the same model. Asked to correct the check with both values in
view, the 1.5B model sided with the check (-10 °C is -14 °F, 9 is "9" in fizzbuzz); asked to
choose between them it answered by position ("A", whichever came first). Asked on its own what
`f(x)` must give by the request, with neither value and no code in view, it worked the value out
(docs/decisions/2026-11-value-verdicts.md). So each conflict is that question: the answer equal
to the code's value says the check is wrong, and the check is rewritten to expect that value (one
candidate, tested like any other); equal to the check's says the code is wrong, and the code
rungs are told so; anything else decides nothing (the reply is read by answers.py). Only python's
pytest comparisons are read.
"""

from __future__ import annotations

import ast
import builtins
import re
import textwrap
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

from greenloop.agent.prompting.files import render_prompt
from greenloop.agent.repair.cases import case_values
from greenloop.agent.repair.check_statements import Check
from greenloop.agent.repair.value_conflict import Conflict, Side, value_of
from greenloop.retrieval import RepoIndex

VERDICT_TOKENS = 400  # a few lines of working and the value: the 1.5B model's fizzbuzz(9) took 300
# raised by code that cannot run as written, never a result the request asks for
_BROKEN = (NameError, AttributeError, TypeError, ImportError, SyntaxError, RecursionError, AssertionError,
           NotImplementedError, UnboundLocalError)
_RAISED = re.compile(r"^(?:E\s+)?([A-Z]\w*(?:Error|Exception))\b")


def conflicts(checks: Iterable[Check], sources: Mapping[str, str] | None = None) -> list[Conflict]:
    """The checks that are pytest comparisons of a call against a literal, with both values known. With the
    test files' `sources`, names the test bound once above the check count as what they hold (`bindings`):
    `text = "Hello, world!"` then `count_words(text)`, or `words = count_words(text)` then `words`."""
    found: list[Conflict] = []
    for check in checks:
        if not check.path.endswith(".py"):
            continue
        given = case_literals(check) if check.via else {}
        bound = bindings((sources or {}).get(check.path, ""), check.via_line or check.start_line, given)
        if (conflict := _conflict(check, bound)) is not None:
            found.append(conflict)
    return found


def bindings(source: str, line: int, given: Mapping[str, str] | None = None) -> dict[str, str]:
    """The names the function around `line` binds exactly once above it, and never changes (no other
    assignment, no `name.attr`, no `name[...]`), to a literal or to a call of a named function on literals:
    name -> the literal's source, or the call's with its names written as their literals. `given`: names
    known to hold literals already (a parametrized case's arguments)."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return dict(given or {})
    around = [n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))
              and n.lineno <= line <= (n.end_lineno or n.lineno)]
    if not around:
        return dict(given or {})
    function = max(around, key=lambda n: n.lineno)  # the innermost
    stores: dict[str, int] = {}
    touched: set[str] = set()
    assigned: list[tuple[str, ast.expr]] = []
    for node in ast.walk(function):
        if isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
            stores[node.id] = stores.get(node.id, 0) + 1
        elif isinstance(node, (ast.Attribute, ast.Subscript)) and isinstance(node.value, ast.Name):
            touched.add(node.value.id)
        elif isinstance(node, ast.arg):
            stores[node.arg] = stores.get(node.arg, 0) + 2  # a parameter (a fixture): not a literal here
        if (isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name)
                and (node.end_lineno or node.lineno) < line):
            assigned.append((node.targets[0].id, node.value))
    once = [(name, value) for name, value in assigned if stores.get(name) == 1 and name not in touched]
    literals = {**(given or {}), **{name: text for name, value in once
                                    if value_of(text := ast.get_source_segment(source, value) or "") is not None}}
    results = {name: text for name, value in once if name not in literals and _closed(value, literals)
               and (text := _with_literals(value, literals) or ast.get_source_segment(source, value) or "")}
    return {**literals, **results}


def _conflict(check: Check, bound: Mapping[str, str]) -> Conflict | None:
    statement = textwrap.dedent(check.via or check.text)
    entry = textwrap.dedent(check.text)
    case = (case_values(entry, check.names) or {}) if check.via else {}  # a parametrized case's values, in `entry`
    if check.via and not case:
        return None
    try:
        tree = ast.parse(statement)
    except SyntaxError:
        return None
    if len(tree.body) != 1 or not isinstance(node := tree.body[0], ast.Assert):
        return None
    test = node.test
    if not (isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], ast.Eq)):
        return None
    sides = [test.left, test.comparators[0]]
    results = {name for name, text in bound.items() if value_of(text) is None}  # names holding a call's result
    calls = [any(isinstance(n, ast.Call) for n in ast.walk(side)) or (isinstance(side, ast.Name) and side.id in results)
             for side in sides]
    from_case = [isinstance(side, ast.Name) and side.id in case and side.id in bound for side in sides]
    literal = [value_of(ast.get_source_segment(statement, side) or "") is not None or from_case[i]
               for i, side in enumerate(sides)]
    if calls == [True, False] and literal[1]:
        at = 0
    elif calls == [False, True] and literal[0]:
        at = 1
    else:
        return None
    call_node, want_node = sides[at], sides[1 - at]
    literals = {name: text for name, text in bound.items() if name not in results}
    if isinstance(call_node, ast.Name):
        call = bound[call_node.id]  # `words`, bound to `count_words(text)` above
    elif _closed(call_node, literals):
        call = _with_literals(call_node, literals) or ast.get_source_segment(statement, call_node) or ""
    else:
        return None  # what `f(path)` or `obj.f()` must give depends on state the question cannot show
    want = ast.get_source_segment(statement, want_node) or ""
    place = _place(statement, want_node)
    if check.via:  # what the case expects is its entry's value; the statement serves every case
        if not from_case[1 - at] or _raised(check.message):
            return None
        assert isinstance(want_node, ast.Name)
        want, statement, place = bound[want_node.id], entry, _place(entry, case[want_node.id])
    raised = _raised(check.message)
    if raised:
        return Conflict(check, call, raised, want, True, statement, place)
    shown = _compared(check.message)
    if shown is None or value_of(shown[1 - at]) != value_of(want) or value_of(shown[at]) is None:
        return None  # not pytest's rewritten comparison of these two sides, or a value cut short
    return Conflict(check, call, shown[at], want, False, statement, place)


def case_literals(check: Check) -> dict[str, str]:
    """A parametrized case's arguments that are literals: name -> its source in the entry."""
    entry = textwrap.dedent(check.text)
    return {name: text for name, node in (case_values(entry, check.names) or {}).items()
            if value_of(text := ast.get_source_segment(entry, node) or "") is not None}


def _closed(node: ast.expr, bound: Mapping[str, str]) -> bool:
    """Whether the checked expression is a call of a named function on literals alone (`f(-10, 'a')`), or on
    names bound to literals."""
    if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Name):
        return False
    arguments = [*node.args, *(k.value for k in node.keywords)]
    return all((isinstance(a, ast.Name) and a.id in bound) or value_of(ast.unparse(a)) is not None for a in arguments)


def _with_literals(node: ast.expr, bound: Mapping[str, str]) -> str:
    """The call with its bound names written as their literals; "" when it names none."""
    assert isinstance(node, ast.Call)
    arguments = [*node.args, *(k.value for k in node.keywords)]
    if not any(isinstance(a, ast.Name) and a.id in bound for a in arguments):
        return ""

    def shown(a: ast.expr) -> str:
        return bound[a.id] if isinstance(a, ast.Name) and a.id in bound else ast.unparse(a)

    parts = [shown(a) for a in node.args] + [f"{k.arg}={shown(k.value)}" for k in node.keywords if k.arg]
    return f"{ast.unparse(node.func)}({', '.join(parts)})"


def _compared(message: str) -> tuple[str, str] | None:
    """The two sides of pytest's `assert <left> == <right>` line, as printed."""
    first = message.strip().splitlines()[0] if message.strip() else ""
    first = first.removeprefix("AssertionError: ")
    if not first.startswith("assert "):
        return None
    try:
        test = ast.parse(first).body[0]
    except (SyntaxError, IndexError):
        return None
    if not (isinstance(test, ast.Assert) and isinstance(test.test, ast.Compare) and len(test.test.ops) == 1):
        return None
    left, right = (ast.get_source_segment(first, n) or "" for n in (test.test.left, test.test.comparators[0]))
    return left, right


def _raised(message: str) -> str:
    """The exception the call raised, when it is one the code raises on purpose (not a crash)."""
    match = _RAISED.match(message.strip())
    if match is None:
        return ""
    kind = getattr(builtins, match.group(1), None)
    if not (isinstance(kind, type) and issubclass(kind, Exception)) or issubclass(kind, _BROKEN):
        return ""  # a class of the project's own would need its import; a crash is not a result
    return match.group(1)


def _place(statement: str, node: ast.expr) -> tuple[int, int, int, int]:
    """The node's place with character columns (ast counts UTF-8 bytes)."""
    rows = statement.split("\n")

    def column(line: int, offset: int) -> int:
        return len(rows[line - 1].encode("utf-8")[:offset].decode("utf-8", "replace"))

    end_line, end_col = node.end_lineno or node.lineno, node.end_col_offset or 0
    return node.lineno, column(node.lineno, node.col_offset), end_line, column(end_line, end_col)


def verdict_messages(conflict: Conflict, goal: str, interface: str, template: str,
                     workspace: Path | None, prompt: str = "repair_verdict") -> list[dict[str, str]]:
    """The question for one conflict: the request (or the function's interface), and the call; no values."""
    spec = f"A {template} project was written from this request:\n{goal.strip()}\n" if goal.strip() else ""
    if interface:
        spec += f"\nThe function it calls:\n```python\n{interface}\n```\n"
    basis = "By the request" if goal.strip() else "By the function's name and what it says it does"
    user = render_prompt(prompt, workspace, spec=spec, basis=basis, call=conflict.call)
    return [{"role": "system", "content": render_prompt("system", workspace)}, {"role": "user", "content": user}]


def interface(index: RepoIndex, conflict: Conflict) -> str:
    """The signature and docstring of the function the call names (no body: the answer is the model's own)."""
    match = re.search(r"([A-Za-z_]\w*)\s*\(", conflict.call.split("(")[0] + "(")
    if match is None:
        return ""
    for d in index.named(match.group(1))[:1]:
        return head_and_docstring(index.lines(d.path)[d.start_line - 1 : d.end_line])
    return ""


def head_and_docstring(rows: Sequence[str]) -> str:
    """A definition's signature (a python one up to its colon) and its docstring, dedented: what it
    promises, not how it does it."""
    end = 1  # a python signature may run over several lines, up to its colon
    if rows and re.match(r"\s*(async\s+)?def\b", rows[0]):
        end = next((i + 1 for i, row in enumerate(rows[:8]) if row.split("#")[0].rstrip().endswith(":")), 1)
    head = list(rows[:end])
    body = "\n".join(rows[end:]).lstrip()
    doc = re.match(r'("""|\'\'\')(.*?)\1', body, re.S)
    if doc:
        indent = re.match(r"\s*", rows[end]).group(0) if len(rows) > end else "    "  # type: ignore[union-attr]
        head.append(indent + doc.group(0))  # its later lines keep their own indentation
    return textwrap.dedent("\n".join(head))


def given_reply(checks: Sequence[Check], sides: Mapping[tuple[str, str, str], Side | None],
                found: Sequence[Conflict]) -> str:
    """A reply of the checks route: each check the request sides with the code against rewritten to expect
    the code's value, the rest as they are; "" when no check is rewritten."""
    by_check = {c.check: c for c in found}
    statements: list[str] = []
    for check in checks:
        conflict = by_check.get(check)
        rewritten = conflict is not None and sides.get(conflict.key) == "code"
        statements.append(conflict.expecting_code() if rewritten and conflict else textwrap.dedent(check.text))
    if all(s == textwrap.dedent(c.text) for s, c in zip(statements, checks, strict=True)):
        return ""
    return "```python\n" + "\n".join(statements) + "\n```\n"


def code_notes(found: Sequence[Conflict], sides: Mapping[tuple[str, str, str], Side | None]) -> str:
    """What the code rungs are told: the values the request sides with the check about."""
    wrong = [c for c in found if sides.get(c.key) == "test"]
    if not wrong:
        return ""
    rows = [f"- `{c.call}` must give `{c.want}`; the code gives `{c.got}`." for c in wrong]
    return "\n## Worked out from the request (the checks are right here)\n" + "\n".join(rows) + "\n"
