"""Rung "function": the top-ranked function or method (a python class with no methods counts), written again.

The model sees that function with its line numbers, the signatures of what it calls and what calls
it, the failing output and the tests as the spec (prompts.py), and writes the function again as
plain code (`repair_function`); the reply is spliced in at the function (splice.py). A reply that
gives a change tested before is asked once for another; one that gives the code back unchanged is
rejected at once (asked again, the 1.5B model echoed it again every time: decision repair-echo); a round whose
candidates mostly gave it back unchanged is "stood by" and not asked first again. A failing test
written in this run (the checks rung, tests that may change) is asked and read the same way, and may
get right expected values but never fewer checks.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from greenloop.agent.changes.testfiles import TestFiles
from greenloop.agent.changes.working_copy import WorkingCopy
from greenloop.agent.plan import Action, DebugPlan
from greenloop.agent.prompting.files import render_prompt
from greenloop.agent.prompting.shows import RequestShows, ran_text
from greenloop.agent.repair.approach import (
    Approach,
    Form,
    ReplyRejected,
    ReplyUnchanged,
    keeps_checks,
)
from greenloop.agent.repair.ladder_rung import LadderState, Rung, target_of
from greenloop.agent.repair.prompts import code_under_test, related_text
from greenloop.agent.repair.splice import SpliceError, Unchanged, closed_blocks, splice
from greenloop.retrieval import RepoIndex
from greenloop.tokens import count_text
from greenloop_sandbox import TestReport

FUNCTION_TOKENS = 1024  # a function reply's least room; a reply that runs on past its room has lost its way


class FunctionForm(Form):
    """The function written again as plain code, spliced in at the function."""

    route = "function"
    task = "repair_task_fix"  # the prompt's request (prompting/prompts/): find the bug and fix it
    small_edits_first = second_look = stands_by = True

    def label(self, approach: Approach) -> str:
        return f"`{approach.target.symbol}` in {approach.target.path}"

    def reply_limit(self, approach: Approach, copy: WorkingCopy, cap: int) -> int | None:
        """Room for the whole function again and the sentence before it.

        A fixed 1,024 cut every reply for youtube-dl's 139-line `process_video_result` (1,700 tokens)
        short, so such a function could never be repaired. `cap` (llm.max_tokens) bounds it, but never
        below FUNCTION_TOKENS."""
        target = approach.target
        rows = (copy.read(target.path) or "").splitlines()[target.start_line - 1 : target.end_line]
        need = count_text("\n".join(rows)) * 5 // 4 + 200
        return min(max(FUNCTION_TOKENS, need), max(cap, FUNCTION_TOKENS))

    def asked_for(self, approach: Approach) -> str:
        return f"`{approach.target.name}`"

    def prompt(self, approach: Approach, copy: WorkingCopy, index: RepoIndex, report: TestReport, tests: TestFiles,
               values: dict[str, str], workspace: Path, *, shows: RequestShows | None = None) -> str:
        target = approach.target
        rows = (copy.read(target.path) or "").splitlines()[target.start_line - 1 : target.end_line]
        shows = shows or RequestShows()
        related = (code_under_test(index, [target], tests) if approach.test
                   else related_text(index, target, tests, docs=shows.callee_docs))
        ran = "" if approach.test else ran_text(shows, copy, index, target.path, target.start_line, target.end_line,
                                                 target.name)
        values |= {"symbol": target.symbol, "func": target.name, "start": str(target.start_line),
                   "end": str(target.end_line), "code": "\n".join(rows), "related": ran + related}
        if approach.test:
            values["spec"] = ""  # the test is the code shown
        task = "repair_task_test" if approach.test else self.task
        values["task"] = render_prompt(task, workspace, **values)
        return render_prompt("repair_function", workspace, **values)

    def known_echo(self, approach: Approach, copy: WorkingCopy, so_far: str) -> bool:
        """The reply has closed the first code block that defines the target, and that block gives it back
        unchanged: `read` then rejects the whole reply as unchanged whatever follows (splice.py decides by
        that block alone), so nothing after it can carry a change (decision 2026-12-early-echo-stop)."""
        closed = closed_blocks(so_far)
        if closed is None:
            return False
        try:
            splice(copy.read(approach.target.path) or "", approach.target, closed)
        except Unchanged:
            return True
        except SpliceError:
            return False
        return False

    def read(self, approach: Approach, copy: WorkingCopy, reply: str, is_test: Callable[[str], bool]) -> DebugPlan:
        target = approach.target
        actions: list[Action]
        try:
            actions = list(splice(copy.read(target.path) or "", target, reply))
        except Unchanged as exc:
            raise ReplyUnchanged(str(exc)) from None
        except SpliceError as exc:
            raise ReplyRejected(str(exc)) from None
        if approach.test:
            keeps_checks(target, actions)
        return DebugPlan(diagnosis=f"`{target.symbol}` rewritten", actions=actions)


FUNCTION = FunctionForm()


class TopFunction(Rung):
    name = "function"

    def applies(self, state: LadderState) -> list[Approach]:
        top = state.functions[:1]
        return [Approach(FUNCTION, target_of(loc), "the top-ranked function") for loc in top]


RUNG = TopFunction()
