"""Ranked locations -> a CodePack: the code a prompt shows, packed into a token budget.

First the failing tests' messages, then the full text (with line numbers) of
the top locations and the failing tests' own code - a definition too long for
what is left as an excerpt (nested definitions folded, head and tail); one
shown whole always leaves room for an excerpt of the next, since the ranked
list is also the repair's list of targets - then
signature-only outlines of the next-ranked files, each part added only while
it fits.
"""

from __future__ import annotations

from collections.abc import Sequence

from greenloop.retrieval.evidence import tests_named
from greenloop.retrieval.graph import resolve
from greenloop.retrieval.index import RepoIndex
from greenloop.retrieval.model import CodePack, Definition, Location
from greenloop.tokens import count_text as count_tokens
from greenloop_sandbox.report import TestFailure

_MESSAGE_CHARS = 600
_MAX_FAILURES = 5
_MIN_EXCERPT_ROWS = 6  # an excerpt shorter than this says too little to be worth its tokens
_MIN_EXCERPT_TOKENS = 300


class _Budget:
    def __init__(self, tokens: int) -> None:
        self.total = tokens
        self.left = tokens
        self.parts: list[str] = []

    def add(self, text: str) -> bool:
        cost = count_tokens(text + "\n")
        if cost > self.left:
            return False
        self.parts.append(text)
        self.left -= cost
        return True


def pack_code(
    index: RepoIndex,
    locations: Sequence[Location],
    *,
    budget_tokens: int,
    failures: Sequence[TestFailure] = (),
    failure_text: bool = True,
    spec: Sequence[Location] | None = None,
) -> CodePack:
    """Failures, full code of the top locations and tests, then outlines, within `budget_tokens`.

    `failure_text=False` leaves the failures' messages out (a prompt that shows
    them already) and still shows the failing tests' code. `spec` (from
    `spec_locations`) is the test code to show after the targets; without it,
    the failing tests are found by their ids in `failures`.
    """
    budget = _Budget(budget_tokens)
    if failures and failure_text:
        budget.add(_failures_text(failures))
    tests = list(spec) if spec is not None else _test_locations(index, failures, locations)
    sections = _full_text(index, [*locations, *tests], budget)
    shown = [location for location, _, _ in sections]
    _outlines(index, locations, shown, budget)
    text = "\n".join(budget.parts)
    tokens = count_tokens(text)
    while tokens > budget_tokens and budget.parts:  # joins can merge tokens; stay under the budget
        budget.parts.pop()
        text = "\n".join(budget.parts)
        tokens = count_tokens(text)
    kept = [(loc, section, whole) for loc, section, whole in sections if section in text]
    return CodePack(
        text=text,
        tokens=tokens,
        locations=[loc for loc, _, _ in kept],
        excerpts=[loc for loc, _, whole in kept if not whole],
    )


def _failures_text(failures: Sequence[TestFailure]) -> str:
    lines = ["## Failing tests"]
    for failure in failures[:_MAX_FAILURES]:
        last_lines = failure.traceback.strip().splitlines()[-1:]
        message = failure.message.strip() or (last_lines[0] if last_lines else "")
        if len(message) > _MESSAGE_CHARS:
            message = message[: _MESSAGE_CHARS - 1] + "…"
        lines.append(f"- {failure.test_id}: {message}" if message else f"- {failure.test_id}")
    if len(failures) > _MAX_FAILURES:
        lines.append(f"- … and {len(failures) - _MAX_FAILURES} more")
    return "\n".join(lines)


def _test_locations(
    index: RepoIndex, failures: Sequence[TestFailure], already: Sequence[Location]
) -> list[Location]:
    seen = {(loc.path, loc.start_line, loc.end_line) for loc in already}
    out: list[Location] = []
    for failure in failures:
        for test in tests_named(index, failure.test_id, failure.file):
            if (test.path, test.start_line, test.end_line) not in seen:
                seen.add((test.path, test.start_line, test.end_line))
                out.append(_as_location(test, "the failing test"))
    return out


def _as_location(definition: Definition, why: str) -> Location:
    return Location(
        definition.path, definition.symbol, definition.kind, definition.start_line, definition.end_line, 0.0, why,
        role="spec",
    )


def _section(index: RepoIndex, location: Location, rows: list[str] | None = None) -> str:
    """A location's code with the file's line numbers (`rows`: an excerpt made by `_excerpt`)."""
    lines = index.lines(location.path)
    start, end = max(1, location.start_line), min(len(lines), location.end_line)
    width = len(str(end))
    body = "\n".join(rows if rows is not None else (f"{n:>{width}}| {lines[n - 1]}" for n in range(start, end + 1)))
    label = location.symbol if location.kind == "lines" else f"{location.symbol} ({location.kind})"
    if location.role == "spec":
        label += ", test code: the spec"
    if rows is not None:
        label += ", excerpt"
    return f"### {location.path}:{start}-{end} {label}\n{body}"


def _excerpt(index: RepoIndex, location: Location, max_tokens: int) -> str | None:
    """A definition too long to show whole: nested definitions folded to their first line, then
    the head and tail of what is left, with the line ranges left out said in place."""
    lines = index.lines(location.path)
    start, end = max(1, location.start_line), min(len(lines), location.end_line)
    width = len(str(end))
    folded = [
        (d.start_line, d.end_line) for d in index.definitions(location.path)
        if d.parent == location.symbol and start < d.start_line and d.end_line <= end
    ]
    rows: list[str] = []
    n = start
    while n <= end:
        fold = next(((a, b) for a, b in folded if a == n), None)
        rows.append(f"{n:>{width}}| {lines[n - 1]}")
        if fold is not None and fold[1] > n:
            rows.append(f"{'':>{width}}| … lines {n + 1}-{fold[1]} not shown (a nested definition)")
            n = fold[1]
        n += 1
    head = len(rows)
    while head >= _MIN_EXCERPT_ROWS:
        tail = head // 3
        if head + tail >= len(rows):
            kept = rows
        else:
            kept = [*rows[:head], f"{'':>{width}}| … {len(rows) - head - tail} lines not shown", *rows[-tail:]]
        text = _section(index, location, kept)
        if count_tokens(text + "\n") <= max_tokens:
            return text
        head = head * 3 // 4
    return None


def _full_text(
    index: RepoIndex, locations: Sequence[Location], budget: _Budget
) -> list[tuple[Location, str, bool]]:
    """The locations' code in rank order: (location, the section showing it, whether whole).

    A location inside one already shown whole (a nested def) is shown by that section.
    """
    shown: list[tuple[Location, str, bool]] = []
    whole: list[tuple[Location, str]] = []
    for position, location in enumerate(locations):
        container = next((section for s, section in whole if _inside(location, s)), None)
        if container is not None:
            shown.append((location, container, True))
            continue
        if not index.lines(location.path):
            continue
        if len(shown) == 0 and not any(p.startswith("## Code") for p in budget.parts):
            budget.add("## Code (line numbers are the file's)")
        section = _section(index, location)
        later = any(not _inside(other, location) for other in locations[position + 1:])
        room = budget.left - (_MIN_EXCERPT_TOKENS if later else 0)
        if count_tokens(section + "\n") <= room and budget.add(section):
            shown.append((location, section, True))
            whole.append((location, section))
            continue
        excerpt = _excerpt(index, location, min(budget.left, max(budget.total // 3, _MIN_EXCERPT_TOKENS)))
        if excerpt is not None and budget.add(excerpt):
            shown.append((location, excerpt, False))
    return shown


def _inside(inner: Location, outer: Location) -> bool:
    return inner.path == outer.path and outer.start_line <= inner.start_line and inner.end_line <= outer.end_line


def _outlines(index: RepoIndex, locations: Sequence[Location], shown: Sequence[Location], budget: _Budget) -> None:
    files: list[str] = []
    for location in [*locations, *shown]:
        if location.path not in files:
            files.append(location.path)
    for location in shown:  # then the files the shown code names
        for definition in index.definitions(location.path):
            if location.start_line <= definition.start_line <= location.end_line:
                for name in definition.refs:
                    for target in resolve(index, name, definition):
                        if target.path not in files:
                            files.append(target.path)
    header_added = False
    for path in files:
        outline = _outline(index, path)
        if not outline:
            continue
        if not header_added:
            header_added = budget.add("## Outline of related files (signatures only)")
        if not budget.add(outline):
            break


def _outline(index: RepoIndex, path: str) -> str:
    definitions = index.definitions(path)
    if not definitions:
        return ""
    width = len(str(max(d.start_line for d in definitions)))
    rows = [path]
    for definition in definitions:
        depth = definition.symbol.count(".")
        rows.append(f"{definition.start_line:>{width}}| {'    ' * depth}{definition.signature}")
    return "\n".join(rows)
