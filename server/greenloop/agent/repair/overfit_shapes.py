"""The overfitting shapes a change can have whatever made it (a small edit or a model's reply), read from the syntax trees.

Qi et al. (ISSTA 2015) name the shapes of test-passing patches that are not fixes; the held-out real projects
showed them in greenloop's greens (docs/decisions/2026-12-done-means-right.md):
- special-casing: a comparison added with a literal the failing test holds (`if x == '00:00:01:100': return 1.1`);
- a deleted branch (an `if`, `elif`, `else`, `except` or `case` fewer) or a deleted `return` or `raise`;
- a regular expression that loses an anchor (`^`, `$`, `\\b`, `\\A`, `\\Z`; one for another is none lost) or whose character class widens
  (`[a-z]` to `[a-z0-9]`, `\\d` to `\\w`, a class to `.`);
- a whole function written again (more than half its lines changed) for a failure that points at one line of it.
Each gives a reason said to the user; none depends on a case's names.
"""

from __future__ import annotations

import ast
import difflib
import re
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field

from greenloop.retrieval import parse_frames

# literals too common to say anything about a test: an empty value, a boolean, None, the smallest numbers
_PLAIN = {"None", "True", "False", "0", "1", "-1", "2", "''", '""', "b''", "0.0", "1.0"}
_ANCHOR = re.compile(r"(?<!\\)(?:\\\\)*(\^|\$|\\b|\\A|\\Z)")
_CLASS = re.compile(r"(?<!\\)\[(?:\\.|[^\]\\])+\]|\\[dwsDWS]|(?<!\\)\.")
_WIDTH = {"\\d": 1, "\\s": 1, "\\w": 2, ".": 3, "\\D": 3, "\\W": 3, "\\S": 3}  # \d < \w < any character


@dataclass(frozen=True)
class Evidence:
    """What the failure says, for the rules that read it: the failing tests' literals (their source text as
    `ast.unparse` writes them) and the lines of each file its tracebacks point at."""

    literals: frozenset[str] = frozenset()
    lines: Mapping[str, frozenset[int]] = field(default_factory=dict)


def shapes(name: str, was: ast.AST, now: ast.AST, evidence: Evidence | None, path: str = "",
           before: str = "", after: str = "") -> list[str]:
    """The overfitting shapes of one function's change (`was` -> `now`), each as the reason said."""
    out: list[str] = []
    if evidence is not None and (cased := _special_cased(was, now, evidence.literals)):
        out.append(f"compares with {cased}, a value the failing test holds, in `{name}` (special-casing)")
    if _count(now, _BRANCHES) < _count(was, _BRANCHES):
        out.append(f"deletes a branch in `{name}`")
    for kind, word in ((ast.Return, "return"), (ast.Raise, "raise")):
        if _count(now, (kind,)) < _count(was, (kind,)):
            out.append(f"deletes a `{word}` in `{name}`")
    out.extend(f"{said} in `{name}`" for said in _regex_changes(was, now))
    if evidence is not None and (rewrite := _rewritten(was, before, now, after, evidence.lines.get(path))):
        out.append(f"rewrites {rewrite} of `{name}` for a failure that points at one line")
    return out


def module_shapes(before: str, after: str) -> list[str]:
    """The regex shapes of a module's own statements (a pattern compiled at import, outside any function)."""
    try:
        was, now = ast.parse(before), ast.parse(after)
    except (SyntaxError, ValueError):
        return []
    return [f"{said} at module level" for said in _regex_changes(was, now)]


def evidence_of(failures: list[tuple[str, str]], sources: Mapping[str, str]) -> Evidence:
    """The evidence from the failing tests (`failures`: (test id, traceback)) and the workspace's texts."""
    literals: set[str] = set()
    lines: dict[str, set[int]] = {}
    paths = list(sources)
    for test_id, traceback in failures:
        path, _, rest = test_id.partition("::")
        name = rest.split("::")[-1].split("[")[0]
        node = _test_node(sources.get(path, ""), name)
        if node is not None:
            literals.update(ast.unparse(c) for c in ast.walk(node) if isinstance(c, ast.Constant))
        for frame in parse_frames(traceback, paths):
            lines.setdefault(frame.path, set()).add(frame.line)
    return Evidence(frozenset(literals - _PLAIN), {p: frozenset(n) for p, n in lines.items()})


_BRANCHES = (ast.If, ast.IfExp, ast.ExceptHandler, ast.match_case)


def _count(function: ast.AST, kinds: tuple[type[ast.AST], ...]) -> int:
    """How many nodes of `kinds` the function has; an `else` (not an `elif`) counts as a branch of its own."""
    nodes = own_nodes(function)
    elses = sum(1 for n in nodes if isinstance(n, ast.If) and n.orelse
                and not (len(n.orelse) == 1 and isinstance(n.orelse[0], ast.If)))
    return sum(1 for n in nodes if isinstance(n, kinds)) + (elses if ast.If in kinds else 0)


def own_nodes(function: ast.AST) -> list[ast.AST]:
    """The nodes of a function, not of the functions and classes nested in it."""
    out, todo = [], list(ast.iter_child_nodes(function))
    while todo:
        node = todo.pop()
        out.append(node)
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            todo.extend(ast.iter_child_nodes(node))
    return out


def _special_cased(was: ast.AST, now: ast.AST, literals: frozenset[str]) -> str:
    """A literal the failing test holds, in a comparison added to the function (one more than it had: an
    edited comparison, `age > 18` to `age >= 18`, adds none)."""
    old = {ast.unparse(n) for n in own_nodes(was) if isinstance(n, ast.Compare)}
    if _count(now, (ast.Compare,)) <= _count(was, (ast.Compare,)):
        return ""
    for node in own_nodes(now):
        if isinstance(node, ast.Compare) and ast.unparse(node) not in old:
            for side in (node.left, *node.comparators):
                if isinstance(side, ast.Constant) and (text := ast.unparse(side)) in literals:
                    return f"`{text}`"
    return ""


def _patterns(function: ast.AST) -> list[str]:
    """The string literals a function hands to `re` (or to a call named for a regex) as its pattern."""
    out = []
    for node in own_nodes(function):
        if not isinstance(node, ast.Call) or not node.args:
            continue
        callee = node.func
        named = callee.attr if isinstance(callee, ast.Attribute) else callee.id if isinstance(callee, ast.Name) else ""
        module = callee.value.id if isinstance(callee, ast.Attribute) and isinstance(callee.value, ast.Name) else ""
        first = node.args[0]
        if (module == "re" or "regex" in named.lower()) and isinstance(first, ast.Constant) \
                and isinstance(first.value, str):
            out.append(first.value)
    return out


def _regex_changes(was: ast.AST, now: ast.AST) -> list[str]:
    """A pattern that lost an anchor or whose character class widened (the patterns paired in order)."""
    old, new = _patterns(was), _patterns(now)
    if len(old) != len(new):
        return []
    out = []
    for a, b in zip(old, new, strict=True):
        if a == b:
            continue
        had, has = Counter(_ANCHOR.findall(a)), Counter(_ANCHOR.findall(b))
        lost = sorted((had - has).keys())
        if had.total() > has.total():  # one anchor for another (`^` to `\\b`) anchors it still
            out.append(f"drops the anchor {', '.join(f'`{x}`' for x in lost)} from the pattern `{a}`")
        elif _widens(_CLASS.findall(a), _CLASS.findall(b)):
            out.append(f"widens a character class of the pattern `{a}`")
    return out


def _widens(old: list[str], new: list[str]) -> bool:
    if len(old) != len(new):
        return False
    return any(_wider(a, b) for a, b in zip(old, new, strict=True) if a != b)


def _wider(a: str, b: str) -> bool:
    if a.startswith("[") and b.startswith("["):
        negated = a.startswith("[^") or b.startswith("[^")
        return not negated and set(_members(a)) < set(_members(b))
    if a.startswith("["):  # a class made a shorthand or any character
        return b in (".", "\\w", "\\W", "\\S", "\\D")
    return _WIDTH.get(b, 0) > _WIDTH.get(a, 0)


def _members(cls: str) -> list[str]:
    """A class's items (`a-z`, `\\d`, `x`) as written."""
    return re.findall(r"\\.|.-.|.", cls[1:-1])


def _rewritten(was: ast.AST, before: str, now: ast.AST, after: str, pointed: frozenset[int] | None) -> str:
    """"5 of its 8 lines" when the change rewrites more than half the function and the failure's tracebacks
    point at exactly one line of it; "" otherwise."""
    start, end = getattr(was, "lineno", 0), getattr(was, "end_lineno", 0) or 0
    if not pointed or not start or len({n for n in pointed if start <= n <= end}) != 1:
        return ""
    old = before.splitlines()[start - 1:end]
    first, last = getattr(now, "lineno", 0), getattr(now, "end_lineno", 0) or 0
    new = after.splitlines()[first - 1:last]
    kept = sum(block.size for block in difflib.SequenceMatcher(None, old, new, autojunk=False).get_matching_blocks())
    changed = len(old) - kept
    return f"{changed} of its {len(old)} lines" if 2 * changed > len(old) else ""


def _test_node(source: str, name: str) -> ast.AST | None:
    """The test function `name` in a test file's text (a method too); None when it is not there."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return None
    return next((n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))
                 and n.name == name), None)

