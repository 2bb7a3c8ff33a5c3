"""The reference fix of one bench case, def by def: what the oracle knows, and code shown to it mended with it.

A fix is the buggy and the fixed tree of the files it changes. Each python function whose own lines
differ (nested functions are their own) is a `DefFix`: its buggy header line, the lines the fix takes
out, and its fixed text. What is left once every changed def is put in (imports, new helpers,
class-level data, other files' text) is a list of `OutsideChange`s. `ReferenceFix.mend` applies the fix
to a fragment of a file as a prompt shows it (one def, or the whole file): only the defs the fragment
shows, found by name, scope and header line (or one of their buggy lines), and, for a whole file, the
outside changes whose text it holds.
"""

from __future__ import annotations

import ast
import difflib
import re
import warnings
from collections.abc import Mapping
from dataclasses import dataclass, field

from greenloop.agent.changes.strings import string_rows

_DEF_LINE = re.compile(r"^(?P<indent>[ \t]*)(?:async[ \t]+)?def[ \t]+(?P<name>\w+)[ \t]*\(")
_IMPORT = re.compile(r"^(?:import |from \S+ import )")


@dataclass(frozen=True)
class Span:
    """A python function in a text: its qualified name (classes and outer functions, dotted) and lines."""

    symbol: str
    start: int  # 1-based, its first decorator included
    end: int  # 1-based, inclusive
    nth: int = 0  # an earlier function of the same name (defined in each branch of an `if`) makes it 1, ...

    @property
    def name(self) -> str:
        return self.symbol.rsplit(".", 1)[-1]

    def holds(self, other: Span) -> bool:
        return self.start <= other.start and other.end <= self.end and self != other


@dataclass(frozen=True)
class DefFix:
    """One def the fix changes: where it is, how the buggy one begins, what it takes out, and the fixed def."""

    path: str
    symbol: str
    header: str  # the buggy def's `def` line, stripped
    removed: tuple[str, ...]  # buggy lines (stripped) the fix takes out or changes
    fixed: str  # the fixed def, dedented (decorators included)
    nth: int = 0  # which of the functions of that name (Span.nth)

    @property
    def name(self) -> str:
        return self.symbol.rsplit(".", 1)[-1]


@dataclass(frozen=True)
class OutsideChange:
    """A change outside every def (an import, a helper, class-level data): text with enough context to be unique."""

    path: str
    old: str
    new: str


@dataclass(frozen=True)
class ReferenceFix:
    """The fix of one case: its trees (changed files only), its changed defs and its changes outside defs."""

    buggy: Mapping[str, str]
    fixed: Mapping[str, str]
    defs: tuple[DefFix, ...] = ()
    outside: tuple[OutsideChange, ...] = ()
    helpers: Mapping[str, tuple[str, ...]] = field(default_factory=dict)  # path -> new top-level defs, new imports

    @classmethod
    def of(cls, buggy: Mapping[str, str], fixed: Mapping[str, str]) -> ReferenceFix:
        """The fix that turns `buggy` into `fixed` (the files either holds that differ)."""
        paths = sorted(p for p in set(buggy) | set(fixed) if buggy.get(p) != fixed.get(p))
        defs: list[DefFix] = []
        outside: list[OutsideChange] = []
        helpers: dict[str, tuple[str, ...]] = {}
        for path in paths:
            old, new = buggy.get(path, ""), fixed.get(path, "")
            found = changed_defs(path, old, new) if path.endswith(".py") else []
            defs.extend(found)
            rest = with_defs(old, found, spans(old))
            outside.extend(outside_changes(path, rest, new))
            helpers[path] = new_helpers(old, new)
        return cls({p: buggy.get(p, "") for p in paths}, {p: fixed.get(p, "") for p in paths},
                   tuple(defs), tuple(outside), helpers)

    def paths(self) -> list[str]:
        return list(self.fixed)

    def mend(self, path: str, text: str, *, scope: str = "", whole: bool = False) -> str:
        """`text` (as shown: a def of `path` whose enclosing classes/functions are `scope`, or the whole file)
        with the fix put in where it shows the fix's defs; a whole file also gets the outside changes it holds."""
        if whole and text == self.buggy.get(path):
            return self.fixed[path]
        rows = text.split("\n")
        lead = _lead(rows)
        body = _dedented(rows) if lead else text
        mine = [d for d in self.defs if d.path == path]
        found = _shown(mine, body, scope)
        lines = body.split("\n")
        for span, fix in sorted(found, key=lambda item: -item[0].start):
            indent = _DEF_INDENT.match(lines[_def_row(lines, span)]).group(0)  # type: ignore[union-attr]
            lines[span.start - 1 : span.end] = _indented(fix.fixed, indent)
        mended = "\n".join(lines)
        if whole:
            for change in (c for c in self.outside if c.path == path):
                if change.old and mended.count(change.old) == 1:
                    mended = mended.replace(change.old, change.new)
                elif not change.old and not mended.strip():
                    mended = change.new
        return "\n".join(_indented(mended, lead)) + "\n" * (len(mended) - len(mended.rstrip("\n"))) if lead else mended

    def shown(self, path: str, text: str, *, scope: str = "") -> list[DefFix]:
        """The fix's defs that `text` (a fragment of `path`) shows."""
        body = _dedented(text.split("\n"))
        return [fix for _, fix in _shown([d for d in self.defs if d.path == path], body, scope)]


_DEF_INDENT = re.compile(r"[ \t]*")


def spans(source: str) -> list[Span]:
    """Every python function of `source` with its qualified name; [] when it does not parse."""
    try:
        with warnings.catch_warnings():  # a project's own invalid escapes are its business
            warnings.simplefilter("ignore")
            tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return []
    out: list[Span] = []

    def visit(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                start = min([child.lineno, *(d.lineno for d in child.decorator_list)])
                out.append(Span(prefix + child.name, start, child.end_lineno or child.lineno))
                visit(child, f"{prefix}{child.name}.")
            elif isinstance(child, ast.ClassDef):
                visit(child, f"{prefix}{child.name}.")
            elif isinstance(child, ast.stmt):
                visit(child, prefix)

    visit(tree, "")
    seen: dict[str, int] = {}
    for i, span in enumerate(out):
        if span.symbol in seen:
            out[i] = Span(span.symbol, span.start, span.end, seen[span.symbol])
        seen[span.symbol] = seen.get(span.symbol, 0) + 1
    return out


def own_lines(lines: list[str], span: Span, all_spans: list[Span]) -> list[str]:
    """A function's lines without those of the functions inside it (each stands for itself as one line)."""
    inner = [s for s in all_spans if span.holds(s) and not any(span.holds(o) and o.holds(s) for o in all_spans)]
    out: list[str] = []
    n = span.start
    while n <= span.end:
        nested = next((s for s in inner if s.start == n), None)
        if nested is not None:
            out.append(f"<def {nested.name}>")
            n = nested.end + 1
            continue
        out.append(lines[n - 1])
        n += 1
    return out


def changed_defs(path: str, old: str, new: str) -> list[DefFix]:
    """The functions in both texts whose own lines differ (a changed nested def is its own, not its outer's)."""
    before, after = spans(old), spans(new)
    old_lines, new_lines = old.split("\n"), new.split("\n")
    by_name = {(s.symbol, s.nth): s for s in after}
    out: list[DefFix] = []
    for span in before:
        other = by_name.get((span.symbol, span.nth))
        if other is None:
            continue
        mine, theirs = own_lines(old_lines, span, before), own_lines(new_lines, other, after)
        if mine == theirs:
            continue
        gone = _removed(mine, theirs)
        header = next((row.strip() for row in old_lines[span.start - 1 : span.end] if _DEF_LINE.match(row)), "")
        fixed = _dedented(new_lines[other.start - 1 : other.end])
        out.append(DefFix(path, span.symbol, header, gone, fixed, span.nth))
    return out


def _removed(mine: list[str], theirs: list[str]) -> tuple[str, ...]:
    matcher = difflib.SequenceMatcher(None, mine, theirs, autojunk=False)
    gone = [row.strip() for tag, i1, i2, _, _ in matcher.get_opcodes() if tag in ("replace", "delete")
            for row in mine[i1:i2]]
    return tuple(row for row in gone if len(row) > 3 and not row.startswith("<def "))


def with_defs(source: str, fixes: list[DefFix], all_spans: list[Span]) -> str:
    """`source` with each changed def (the outermost of nested ones) replaced by its fixed text."""
    lines = source.split("\n")
    chosen = [s for s in all_spans if any((f.symbol, f.nth) == (s.symbol, s.nth) for f in fixes)]
    chosen = [s for s in chosen if not any(o.holds(s) for o in chosen)]
    for span in sorted(chosen, key=lambda s: -s.start):
        fix = next(f for f in fixes if (f.symbol, f.nth) == (span.symbol, span.nth))
        indent = _DEF_INDENT.match(lines[_def_row(lines, span)]).group(0)  # type: ignore[union-attr]
        lines[span.start - 1 : span.end] = _indented(fix.fixed, indent)
    return "\n".join(lines)


def outside_changes(path: str, old: str, new: str) -> list[OutsideChange]:
    """The changes that turn `old` into `new`, each with the fewest lines of context that make its text unique."""
    if old == new:
        return []
    if not old.strip():
        return [OutsideChange(path, "", new)]
    a, b = old.splitlines(keepends=True), new.splitlines(keepends=True)
    out: list[OutsideChange] = []
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        if tag == "equal":
            continue
        before = 0 if i2 > i1 else 1
        while True:
            lo, hi = max(0, i1 - before), min(len(a), i2 + (before if i2 > i1 else 0))
            text = "".join(a[lo:hi])
            if (old.count(text) == 1 and text.strip()) or (lo == 0 and hi == len(a)):
                break
            before += 1
        added = "".join([*a[lo:i1], *b[j1:j2], *a[i2:hi]])
        out.append(OutsideChange(path, text, added))
    return out


def new_helpers(old: str, new: str) -> tuple[str, ...]:
    """What the fix adds at the top level of a python file that a def's reply may bring: imports, new functions."""
    if not new:
        return ()
    had = {s.symbol for s in spans(old)}
    rows = new.split("\n")
    imports = [row for row in rows if _IMPORT.match(row) and row not in old.split("\n")]
    funcs = ["\n".join(rows[s.start - 1 : s.end]) for s in spans(new) if "." not in s.symbol and s.symbol not in had]
    return (*imports, *funcs)


def _shown(fixes: list[DefFix], body: str, scope: str) -> list[tuple[Span, DefFix]]:
    """(where in `body`, which fix) for each of `fixes` that `body` shows; the outermost of nested ones."""
    lines = body.split("\n")
    found: list[tuple[Span, DefFix]] = []
    prefix = f"{scope}." if scope else ""
    shown = spans(body) or _spans_by_indent(lines)
    twice = {s.symbol for s in shown if s.nth}  # defined more than once here: the nth is the nth
    for span in shown:
        symbol = prefix + span.symbol
        text = "\n".join(row.strip() for row in lines[span.start - 1 : span.end])
        own = lines[_def_row(lines, span)].strip()
        best: tuple[int, DefFix] | None = None
        for fix in fixes:
            if fix.name != span.name or not (fix.symbol == symbol or fix.symbol.endswith("." + symbol)):
                continue
            if span.symbol in twice and fix.nth != span.nth:
                continue
            # the fix whose taken-out lines the def shows most: defs of one name and header (a `callback` in
            # each branch of an `if`), shown one at a time, are told apart by their bodies
            held = sum(row in text for row in fix.removed)
            if (held or own == fix.header) and (best is None or held > best[0]):
                best = (held, fix)
        if best is not None:
            found.append((span, best[1]))
    return [(s, f) for s, f in found if not any(o.holds(s) for o, _ in found)]


def _spans_by_indent(lines: list[str]) -> list[Span]:
    """Functions found by their `def` lines and indentation, for a fragment that does not parse."""
    out: list[Span] = []
    for n, row in enumerate(lines, 1):
        match = _DEF_LINE.match(row)
        if match is None:
            continue
        indent = len(match.group("indent"))
        end = n
        for m in range(n + 1, len(lines) + 1):
            text = lines[m - 1]
            if text.strip() and len(text) - len(text.lstrip()) <= indent and not text.lstrip().startswith((")", "]")):
                break
            if text.strip():
                end = m
        out.append(Span(match.group("name"), n, end))
    return out


def _def_row(lines: list[str], span: Span) -> int:
    """The 0-based index of a function's `def` line (past its decorators)."""
    for n in range(span.start - 1, span.end):
        if _DEF_LINE.match(lines[n]):
            return n
    return span.start - 1


def _indented(text: str, indent: str) -> list[str]:
    """`text` moved to `indent`, but for a multi-line string's later lines (its content, as splice.py keeps them)."""
    rows = text.rstrip("\n").split("\n")
    kept = string_rows("fix.py", "\n".join(rows))
    return [(indent + row) if row.strip() and i not in kept else row for i, row in enumerate(rows)]


def _lead(rows: list[str]) -> str:
    """The indentation of a fragment's first line (a def shown as it is in its class)."""
    first = next((row for row in rows if row.strip()), "")
    return first[: len(first) - len(first.lstrip())]


def _dedented(rows: list[str]) -> str:
    """`rows` without their first line's indentation (a multi-line string's later lines stay as they are)."""
    lead = _lead(rows)
    kept = string_rows("fix.py", "\n".join(rows))
    return "\n".join(row[len(lead):] if row.startswith(lead) and i not in kept else row for i, row in enumerate(rows))
