"""Rung "region": a long top-ranked function's changed lines only, asked as SEARCH/REPLACE blocks inside it, not its whole def.

The function rung asks for the whole function again, and its reply's room grows with the function
(function.py: its tokens x 1.25 + 200, up to `llm.max_tokens`, 2,048 by default). Past LONG_TOKENS
of function that reply takes the embedded model minutes a candidate, and past about 1,480 it no
longer fits the cap at all: the reply is cut off and the bug cannot be fixed there, however right the
model is. For such a function this rung takes the place of the function, hotter and anew rungs' rounds
(same place, same sampling, once per temperature): the model is shown the whole function, the lines of it the
failing tests' tracebacks pass through, and asked for the lines to change only, as SEARCH/REPLACE
blocks in one code block (REGION_TOKENS of reply). The blocks are applied inside that function only
(region_edits.py); anything else refuses the reply with its reason. A short function goes through
the function rung as before, and with this rung off (`loop.rungs_off`) a long one does too.
(docs/decisions/2026-12-region-requests.md)
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from greenloop.agent.changes.testfiles import TestFiles
from greenloop.agent.changes.working_copy import WorkingCopy
from greenloop.agent.plan import DebugPlan
from greenloop.agent.prompting.files import render_prompt
from greenloop.agent.prompting.shows import RequestShows, ran_text
from greenloop.agent.repair.approach import Approach, Form, ReplyRejected, ReplyUnchanged
from greenloop.agent.repair.ladder_rung import LadderState, Rung, target_of
from greenloop.agent.repair.prompts import related_text
from greenloop.agent.repair.region_edits import region_edits
from greenloop.agent.repair.rungs.function import FunctionForm
from greenloop.agent.repair.splice import SpliceError, Target, Unchanged
from greenloop.retrieval import RepoIndex, parse_frames
from greenloop.tokens import count_text
from greenloop_sandbox import TestReport

LONG_TOKENS = 1024  # a longer function is asked for its changed lines: its whole reply would need 1,480+ tokens
REGION_TOKENS = 640  # a sentence and two or three blocks of a few lines each
HOT_LINES = 6  # the traceback lines in the function shown apart, at most
WHY = "the lines to change in the long top-ranked function"
PLEASE = "Now give the lines to change in `{func}` as SEARCH/REPLACE blocks in one code block."


class RegionForm(Form):
    """SEARCH/REPLACE blocks inside one function, applied to it alone."""

    route = "region"
    small_edits_first = second_look = stands_by = True

    def label(self, approach: Approach) -> str:
        return f"lines of `{approach.target.symbol}` in {approach.target.path}"

    def reply_limit(self, approach: Approach, copy: WorkingCopy, cap: int) -> int | None:
        return min(REGION_TOKENS, cap)

    def please(self, approach: Approach) -> str:
        return PLEASE.format(func=approach.target.name)

    def prompt(self, approach: Approach, copy: WorkingCopy, index: RepoIndex, report: TestReport, tests: TestFiles,
               values: dict[str, str], workspace: Path, *, shows: RequestShows | None = None) -> str:
        target, shows = approach.target, shows or RequestShows()
        rows = _rows(copy, target)
        ran = ran_text(shows, copy, index, target.path, target.start_line, target.end_line, target.name)
        values |= {"symbol": target.symbol, "func": target.name, "start": str(target.start_line),
                   "end": str(target.end_line), "code": "\n".join(rows),
                   "related": related_text(index, target, tests, docs=shows.callee_docs),
                   "hot": hot_lines(copy, target, report) + ran}
        return render_prompt("repair_region", workspace, **values)

    def read(self, approach: Approach, copy: WorkingCopy, reply: str, is_test: Callable[[str], bool]) -> DebugPlan:
        target = approach.target
        try:
            actions = region_edits(copy.read(target.path) or "", target, reply)
        except Unchanged as exc:
            raise ReplyUnchanged(str(exc)) from None
        except SpliceError as exc:
            raise ReplyRejected(str(exc)) from None
        return DebugPlan(diagnosis=f"lines of `{target.symbol}` changed", actions=list(actions))


REGION = RegionForm()


def hot_lines(copy: WorkingCopy, target: Target, report: TestReport) -> str:
    """The lines of the function the failing tests' tracebacks pass through, each with its number ("" for none)."""
    rows = (copy.read(target.path) or "").splitlines()
    paths = copy.paths()
    seen: list[int] = []
    for failure in report.failures:
        for frame in parse_frames(failure.traceback, paths):
            if frame.path == target.path and target.start_line <= frame.line <= target.end_line \
                    and frame.line not in seen and frame.line <= len(rows):
                seen.append(frame.line)
    if not seen:
        return ""
    shown = [f"- line {n}: `{rows[n - 1].strip()}`" for n in sorted(seen[:HOT_LINES])]
    return "\nThe failing tests' tracebacks pass through these lines of it:\n" + "\n".join(shown) + "\n"


def is_long(copy: WorkingCopy, target: Target) -> bool:
    """Whether the function is past LONG_TOKENS, where its whole def is no longer asked for."""
    return count_text("\n".join(_rows(copy, target))) > LONG_TOKENS


def _rows(copy: WorkingCopy, target: Target) -> list[str]:
    return (copy.read(target.path) or "").splitlines()[target.start_line - 1 : target.end_line]


class Region(Rung):
    name = "region"

    def applies(self, state: LadderState) -> list[Approach]:
        top = target_of(state.functions[0]) if state.functions else None
        if top is None or not is_long(state.copy, top):
            return []
        return [Approach(REGION, top, WHY)]

    def place(self, steps: list[Approach], state: LadderState) -> list[Approach]:
        """In place of each whole-def request on the long function (the function, hotter and anew rungs'), sampled
        as it was, once per temperature; after the rungs before it when there is none (those rungs turned off)."""
        mine = self.applies(state)
        if not mine:
            return steps
        top = mine[0].target
        out: list[Approach] = []
        placed: set[float] = set()
        for step in steps:
            if not (isinstance(step.form, FunctionForm) and not step.test and step.target == top):
                out.append(step)
            elif step.hotter not in placed:
                placed.add(step.hotter)
                out.append(Approach(REGION, top, WHY + (", sampled hotter" if step.hotter else ""), hotter=step.hotter))
        return out if placed else [*out, *mine]


RUNG = Region()
