"""Rung "anew or file": the whole top file (at most FILE_ROUTE_LINES lines) written again, or, when the top
function is most of its file, that function written anew from the tests.

The file form is shared by the rungs that ask for a file whole (broken_file.py, the one-shot baseline,
a failing test file in checks.py): the reply's code block for that file replaces it (code_reply.py); a
reply that is the file as it is changes nothing and is rejected (asked again, the model echoed it again).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from greenloop.agent.changes.testfiles import TestFiles
from greenloop.agent.changes.working_copy import WorkingCopy
from greenloop.agent.plan import DebugPlan, EditAction, WriteAction
from greenloop.agent.prompting.code_reply import extract_code
from greenloop.agent.prompting.files import render_prompt
from greenloop.agent.repair.approach import (
    CODE_PLEASE,
    Approach,
    Form,
    ReplyRejected,
    ReplyUnchanged,
    keeps_checks,
)
from greenloop.agent.repair.prompts import code_under_test, failing_test_targets
from greenloop.agent.repair.rung import FILE_ROUTE_LINES, LadderState, Rung, target_of
from greenloop.agent.repair.rungs.function import FUNCTION
from greenloop.agent.repair.splice import Target
from greenloop.retrieval import RepoIndex
from greenloop_sandbox import TestReport


class FileForm(Form):
    """A whole file written again."""

    route = "file"
    small_edits_first = second_look = True  # of the top-ranked function in it

    def asked_for(self, approach: Approach) -> str:
        return f"`{approach.target.path}`"

    def please(self, approach: Approach) -> str:
        return CODE_PLEASE.format(what=self.asked_for(approach))

    def prompt(self, approach: Approach, copy: WorkingCopy, index: RepoIndex, report: TestReport, tests: TestFiles,
               values: dict[str, str], workspace: Path) -> str:
        target = approach.target
        source = copy.read(target.path) or ""
        if approach.test:  # a test file written with the code: its expected values may be wrong
            in_file = [t for t in failing_test_targets(index, report, tests) if t.path == target.path]
            values |= {"code": source.rstrip("\n"), "spec": "", "related": code_under_test(index, in_file, tests)}
            return render_prompt("repair_test_file", workspace, **values)
        values["code"] = source.rstrip("\n")
        return render_prompt("oneshot" if approach.bare else "repair_file", workspace, **values)

    def read(self, approach: Approach, copy: WorkingCopy, reply: str, is_test: Callable[[str], bool]) -> DebugPlan:
        target = approach.target
        code = extract_code(reply, target.path, [p for p in copy.paths() if p != target.path])
        if code.problem:
            raise ReplyRejected(code.problem)
        if code.text.rstrip() == (copy.read(target.path) or "").rstrip():
            raise ReplyUnchanged(f"the reply's `{target.path}` is the file as it is: it changes nothing")
        if approach.test:
            keeps_checks(target, [EditAction(path=target.path, search=copy.read(target.path) or "",
                                             replace=code.text)])
        return DebugPlan(diagnosis=f"{target.path} rewritten", actions=[WriteAction(path=target.path, content=code.text)])


FILE = FileForm()


def whole_file(path: str, why: str) -> Approach:
    return Approach(FILE, Target(path, path, "file", 1, 0), why)


class AnewOrFile(Rung):
    name = "anew or file"

    def applies(self, state: LadderState) -> list[Approach]:
        return self._brought([], state)

    def place(self, steps: list[Approach], state: LadderState) -> list[Approach]:
        return [*steps, *self._brought(steps, state)]

    def _brought(self, steps: list[Approach], state: LadderState) -> list[Approach]:
        if not state.sources:
            return []
        path = state.sources[0].path
        top = target_of(state.functions[0]) if state.functions else None
        if top is not None and _mostly(state.copy, top):  # the whole file would be the same request again
            return [Approach(FUNCTION, top, "the top-ranked function, written anew from the tests", anew=True)]
        if state.lines(path) <= FILE_ROUTE_LINES and not any(s.form is FILE and s.target.path == path for s in steps):
            return [whole_file(path, "the whole file")]
        return []


def _mostly(copy: WorkingCopy, target: Target) -> bool:
    """The function is most of its file's code (imports and blank lines aside)."""
    rows = (copy.read(target.path) or "").splitlines()
    code = [r for r in rows if r.strip() and not r.lstrip().startswith(("import ", "from ", "#"))]
    return (target.end_line - target.start_line + 1) >= 0.8 * len(code)


RUNG = AnewOrFile()
