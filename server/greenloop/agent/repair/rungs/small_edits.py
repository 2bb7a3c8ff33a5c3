"""Rung "small edits": before the model is asked about a function (or a file), its small edits, asked of no model.

Once per function and state, up to `loop.small_edits` small edits of the function the round asks about
(small_edit_candidates.py, guard_edits.py, pattern_edits.py: an operator, a constant, a twin like min/max, a
statement or a name too many) are tested in the same iteration, for at most `loop.small_edits_seconds`;
for a whole file (code that does not load: a `NameError`), those of the top-ranked function in it.
Edits on the lines the failures' tracebacks go through come first, then those on the lines the
coverage pass finds most suspicious. A small edit moves the state only when more tests pass (one
step too few or too many in may look like progress). Each kind's risk is `risk.RISKY`'s.
When a failing test hung (the code loops), the model's round comes first and the small edits follow
only if it brings nothing better: each edit that leaves the loop in place waits out a test's limit
(at least a second, against milliseconds), so the edits cost more than a model round there
(docs/decisions/2026-11-hangs-model-first.md).
"""

from __future__ import annotations

from collections.abc import Callable, Collection
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from greenloop.agent.changes.testfiles import TestFiles
from greenloop.agent.changes.working_copy import WorkingCopy
from greenloop.agent.plan import DebugPlan
from greenloop.agent.prompting.shows import RequestShows
from greenloop.agent.repair.approach import Approach, Form, stood_by_key
from greenloop.agent.repair.file_form import FILE
from greenloop.agent.repair.ladder_rung import UNSHOWN
from greenloop.agent.repair.rungs.function import FUNCTION
from greenloop.agent.repair.small_edit_candidates import small_edits
from greenloop.agent.repair.splice import Target
from greenloop.retrieval import Location, RepoIndex, parse_frames
from greenloop.settings import LoopSettings
from greenloop_sandbox import TestReport
from greenloop_sandbox.case_times import HUNG

NAME = "small edits"


@dataclass(frozen=True)
class SmallEditsForm(Form):
    """The small edits' replies, each known before the round; read as a function's reply."""

    replies: tuple[str, ...] = ()  # the candidates (small_edit_candidates.py), asked of no model
    kinds: tuple[str, ...] = ()  # the kind of each (risk.py)
    route = "small_edits"
    more_passing_only = True

    def label(self, approach: Approach) -> str:
        return f"small edits of `{approach.target.symbol}` in {approach.target.path}"

    def kind_of(self, approach: Approach, index: int) -> str:
        return self.kinds[index - 1] if 0 < index <= len(self.kinds) else "small edit"

    def count(self, approach: Approach, asked: int) -> int:
        return len(self.replies)

    def given(self, approach: Approach, index: int) -> str | None:
        return self.replies[index - 1]

    def prompt(self, approach: Approach, copy: WorkingCopy, index: RepoIndex, report: TestReport, tests: TestFiles,
               values: dict[str, str], workspace: Path, *, shows: RequestShows | None = None) -> str:
        raise NotImplementedError("small edits are asked of no model")

    def read(self, approach: Approach, copy: WorkingCopy, reply: str, is_test: Callable[[str], bool]) -> DebugPlan:
        return FUNCTION.read(approach, copy, reply, is_test)


def edits_of(approach: Approach, copy: WorkingCopy, report: TestReport, locations: list[Location],
             scores: Callable[[str], dict[int, float]], loop: LoopSettings,
             tried: Collection[tuple[int, str]]) -> tuple[Approach | None, tuple[int, str] | None]:
    """The small edits of the function `approach` asks about (None when there are none), and the key
    (`key_of`) the run keeps as tried; (None, None) when they were `tried` in this state already.
    `scores(path)`: the coverage pass's line scores."""
    target = _function_of(approach, locations)
    key = key_of(copy, target) if target is not None else None
    if target is None or key in tried:
        return None, None
    paths = copy.paths()
    hot: set[int] = set()
    for failure in report.failures:
        hot |= {f.line for f in parse_frames(failure.traceback, paths)
                if f.path == target.path and target.start_line <= f.line <= target.end_line}
    edits = small_edits(copy.read(target.path) or "", target, loop.small_edits, hot, scores(target.path),
                        loop.edits_off)
    if not edits:
        return None, key
    form = SmallEditsForm(replies=tuple(r for r, _ in edits), kinds=tuple(k for _, k in edits))
    return Approach(form, target, "small edits of the function, tested before the model is asked"), key


def applies(approach: Approach, loop: LoopSettings) -> bool:
    """Whether the round of `approach` is preceded by small edits (a function's or a file's, not a test's)."""
    return not approach.test and loop.small_edits > 0 and NAME not in loop.rungs_off and approach.form.small_edits_first


def after_the_model(report: TestReport) -> bool:
    """Whether the small edits wait for the model's round: a failing test of the state hung."""
    return any(HUNG.search(f.message) for f in report.failures)


class SmallEdits:
    """The ladder's small edits beside a round that asks about a function or a file: before the model's round,
    or after it when a failing test hung (`first`: whether this entry is the one before)."""

    name = NAME

    def __init__(self, first: bool) -> None:
        self.first = first
        self.when: Literal["before the model", "after the model"] = "before the model" if first else "after the model"

    def applies(self, approach: Approach, report: TestReport, loop: LoopSettings) -> bool:
        return applies(approach, loop) and after_the_model(report) is not self.first

    def approach(self, approach: Approach, copy: WorkingCopy, report: TestReport, locations: list[Location],
                 scores: Callable[[str], dict[int, float]], loop: LoopSettings,
                 tried: Collection[tuple[int, str]]) -> tuple[Approach | None, tuple[int, str] | None]:
        return edits_of(approach, copy, report, locations, scores, loop, tried)


BEFORE = SmallEdits(first=True)  # tested before the model is asked
AFTER = SmallEdits(first=False)  # a failing test hung: tested after the model's round, when it brought nothing better


def key_of(copy: WorkingCopy, target: Target) -> tuple[int, str]:
    """The state and the function whose small edits are tried once."""
    return copy.fingerprint(), stood_by_key(target)


def _function_of(approach: Approach, locations: list[Location]) -> Target | None:
    if approach.form is not FILE:
        return approach.target
    inside = next((loc for loc in locations if loc.path == approach.target.path and loc.kind in ("function", "method")
                   and loc.role not in UNSHOWN), None)
    return Target(inside.path, inside.symbol, inside.kind, inside.start_line, inside.end_line) if inside else None
