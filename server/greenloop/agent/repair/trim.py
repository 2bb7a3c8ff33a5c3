"""A green is trimmed before it is offered: each earlier change the green does not need is left out.

A state may hold moves of earlier rounds (a small edit or a reply that made some failing tests pass). When a
later round goes green, those changes ride along in the change offered, needed or not. So the green kept
(after the gates and the step on a green) is tried without each of them: the earlier changes are the hunks
of the state against the run's original files (per file, per hunk, in order); a hunk the green round's own
change touches (or sits next to) is not tried. A small edit's hunks are tried one by one; the hunks of a
model's reply (or a settled test) are one intent, tried together, and not at all when the green touches one
of them. Each try is one candidate, the green's files with that unit back to its original text, run in the
sandbox on the run's suite; it counts when every test passes and the gates the green passed pass too. A unit
the tests do not need is left out, and the next is tried on the reduced green. At most `loop.trim_tries`
tries per green, none once the run's budget is spent.
"""

from __future__ import annotations

import ast
import difflib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Literal

from greenloop.agent.changes.working_copy import WorkingCopy
from greenloop.agent.event_sink import EventSink
from greenloop.agent.events import Message
from greenloop.agent.repair.candidate_round import RoundInputs
from greenloop.agent.repair.second_look import Green, Judge
from greenloop.errors import GreenloopError
from greenloop.settings import LoopSettings
from greenloop_sandbox import TestReport

NAME = "trim"


@dataclass(frozen=True)
class Move:
    """A round that moved the state: its number, the files it moved to, whether its change is one intent (a
    model's reply, a settled test: its hunks are tried together) or a small edit's (tried hunk by hunk)."""

    iteration: int
    files: Mapping[str, bytes]
    whole: bool = True


@dataclass(frozen=True)
class Hunk:
    """One earlier change: lines [start, end) of the state's text of `path`, which were `was` in the original."""

    path: str
    start: int
    end: int
    was: tuple[str, ...]
    now: tuple[str, ...]


@dataclass(frozen=True)
class Kept:
    """What trimming reads: the green kept, the state it was made on, how to test and gate a try."""

    green: Green
    copy: WorkingCopy  # the state (its base: the run's original files)
    report: TestReport  # the state's tests
    inputs: RoundInputs  # the sandbox, the suite, the budget
    moves: Sequence[Move]  # the rounds that moved the state, in order
    loop: LoopSettings
    judge: Judge  # the gates, as the green passed them


def hunks(path: str, original: str, state: str) -> list[Hunk]:
    """The changes of `state` against `original`, as unified-diff hunks (nearby changes together)."""
    was, now = original.splitlines(keepends=True), state.splitlines(keepends=True)
    found: list[Hunk] = []
    for group in difflib.SequenceMatcher(None, was, now, autojunk=False).get_grouped_opcodes(3):
        changed = [op for op in group if op[0] != "equal"]
        if not changed:
            continue
        i1, j1, i2, j2 = changed[0][1], changed[0][3], changed[-1][2], changed[-1][4]
        found.append(Hunk(path, j1, j2, tuple(was[i1:i2]), tuple(now[j1:j2])))
    return found


def earlier_hunks(copy: WorkingCopy, green: Mapping[str, str]) -> list[tuple[Hunk, bool]]:
    """The state's hunks against the original files, in a text file the run found and kept, each with whether
    the green's own change touches it (`green`: the green's text of each file)."""
    found: list[tuple[Hunk, bool]] = []
    for path in copy.changed_paths():
        original, state, after = copy.original(path), copy.read(path), green.get(path)
        if original is None or state is None or after is None:  # a file added, removed or not text: not tried
            continue
        found += [(h, _touched(h, state, after)) for h in hunks(path, original, state)]
    return found


def units(copy: WorkingCopy, green: Mapping[str, str], moves: Sequence[Move]) -> list[tuple[str, list[Hunk]]]:
    """What is tried, in order, each with the round that made it: a small edit's hunk alone, a reply's hunks
    together; none the green touches (nor a reply one of whose hunks it touches)."""
    groups: dict[object, tuple[str, list[Hunk], list[bool]]] = {}
    for hunk, touched in earlier_hunks(copy, green):
        move = _move_of(hunk, copy, moves)
        key: object = move.iteration if move is not None and move.whole else hunk
        said = f"round {move.iteration}" if move is not None else "an earlier round"
        groups.setdefault(key, (said, [], []))
        groups[key][1].append(hunk)
        groups[key][2].append(touched)
    return [(said, found) for said, found, touched in groups.values() if not any(touched)]


def _touched(hunk: Hunk, state: str, green: str) -> bool:
    """Whether the green's change of `state` overlaps the hunk or is next to it."""
    ops = difflib.SequenceMatcher(None, state.splitlines(keepends=True), green.splitlines(keepends=True),
                                  autojunk=False).get_opcodes()
    return any(tag != "equal" and i1 <= hunk.end and i2 >= hunk.start for tag, i1, i2, _, _ in ops)


def without(state: str, green: str, out: Sequence[Hunk]) -> str:
    """The green's text with the hunks `out` (of `state`, none touched by the green) back to their original."""
    lines = green.splitlines(keepends=True)
    ops = difflib.SequenceMatcher(None, state.splitlines(keepends=True), lines, autojunk=False).get_opcodes()
    ops = ops or [("equal", 0, 0, 0, 0)]  # both empty
    spans: list[tuple[int, int, tuple[str, ...]]] = []
    for hunk in out:
        i1, j1 = next((i1, j1) for tag, i1, i2, j1, _ in ops
                      if tag == "equal" and i1 <= hunk.start and hunk.end <= i2)
        spans.append((j1 + hunk.start - i1, j1 + hunk.end - i1, hunk.was))
    for start, end, was in sorted(spans, reverse=True):
        lines[start:end] = was
    return "".join(lines)


def _move_of(hunk: Hunk, copy: WorkingCopy, moves: Sequence[Move]) -> Move | None:
    """The first move whose files hold the hunk (None: none holds it as it is)."""
    original = copy.original(hunk.path) or ""
    for move in moves:
        data = move.files.get(hunk.path)
        text = None if data is None else data.decode("utf-8", "replace").replace("\r\n", "\n")
        if text is not None and any((h.was, h.now) == (hunk.was, hunk.now) for h in hunks(hunk.path, original, text)):
            return move
    return None


def where(hunk: Hunk, state: str) -> str:
    """The innermost def or class around the hunk's lines in the state ("`merge`"), or its lines."""
    first, last = hunk.start + 1, max(hunk.end, hunk.start + 1)
    try:
        tree = ast.parse(state)
    except (SyntaxError, ValueError):
        tree = None
    best = ""
    for node, name in _named(tree.body if tree else [], ""):
        if node.lineno <= first and last <= (node.end_lineno or node.lineno):
            best = name  # visited outer first: the last one that holds it is the innermost
    return f"`{best}`" if best else f"lines {first}-{last}"


def _named(body: list[ast.stmt], prefix: str) -> list[tuple[ast.stmt, str]]:
    out: list[tuple[ast.stmt, str]] = []
    for node in body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            out.append((node, prefix + node.name))
            out += _named(node.body, f"{prefix}{node.name}.")
    return out


async def trimmed(kept: Kept, events: EventSink) -> Green:
    """The green without each earlier change it does not need (see the module docstring); what was left out,
    and what was tried and kept, said to `events`."""
    green, copy = kept.green, kept.copy
    fork = copy.fork()
    fork.restore(dict(green.result.files or {}))
    state = {p: copy.read(p) or "" for p in copy.changed_paths()}
    after = {p: text for p in state if (text := fork.read(p)) is not None}
    out: list[Hunk] = []
    tries = 0
    for who, unit in units(copy, after, kept.moves):
        if tries >= kept.loop.trim_tries or kept.inputs.over_budget() is not None:
            break
        tries += 1
        trial = fork.fork()
        for path in dict.fromkeys(h.path for h in unit):
            trial.write(path, without(state[path], after[path], [h for h in (*out, *unit) if h.path == path]))
        said = f"{who}'s change to {_places(unit, state)}"
        passed = await _passes(kept, green, trial)
        if passed is None:
            events.emit(Message(text=f"The green keeps {said}: the tests need it.", level="info"))
            continue
        out += unit
        fork, green = trial, passed
        events.emit(Message(text=f"{said[0].upper()}{said[1:]} is not needed for the tests to pass: left out.",
                            level="info"))
    if tries:  # the sandbox holds the green offered, as after the gates
        async with kept.inputs.sandbox.lease() as box:
            await box.sync(fork.files(), fork.deleted())
    return green


def _places(unit: Sequence[Hunk], state: Mapping[str, str]) -> str:
    """"`merge` in a.py", "`f`, `g` in a.py and `h` in b.py": where the unit's hunks are."""
    paths = dict.fromkeys(h.path for h in unit)
    return " and ".join(", ".join(dict.fromkeys(where(h, state[p]) for h in unit if h.path == p)) + f" in {p}"
                        for p in paths)


async def _passes(kept: Kept, green: Green, trial: WorkingCopy) -> Green | None:
    """The green made of `trial` when its tests pass and the gates do (None: they do not)."""
    inputs = kept.inputs
    async with inputs.sandbox.lease() as box:
        await box.sync(trial.files(), trial.deleted())
        report = await box.run_tests(inputs.suite, timeout=inputs.test_timeout)
    green_report = green.result.report
    if not report.green or (green_report is not None and report.total < green_report.total):
        return None
    result = replace(green.result, files=trial.files(), report=report)
    if await kept.judge(replace(green, result=result)) is None:  # refused: it breaks a test that passed
        return None
    return replace(green, result=result)


class Trim:
    """On the green kept: the earlier changes it does not need left out (`loop.trim_tries` tries)."""

    name = NAME
    when: Literal["on the green kept"] = "on the green kept"

    def applies(self, kept: Kept) -> bool:
        return kept.loop.trim_tries > 0 and bool(kept.copy.changed_paths()) and bool(kept.green.result.files)

    async def run(self, kept: Kept, events: EventSink) -> Green:
        try:
            return await trimmed(kept, events)
        except GreenloopError as exc:  # the sandbox failed a try: the green stays as the gates passed it
            events.emit(Message(text=f"Trimming the green stopped: {exc}; it is offered as it was.", level="warning"))
            return kept.green


STEP = Trim()
