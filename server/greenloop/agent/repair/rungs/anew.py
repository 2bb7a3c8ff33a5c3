"""Rung "anew": when the top-ranked function is most of its file, that function written anew from the tests.

The function rung and the hotter one ask the model to find the bug in the code shown; a small model
often gives the code back, or the same wrong change. This rung asks for the function again so that every
assertion of the tests holds, saying first what the failing assertion needs (`repair_task_anew`); the
code is still shown, the reply is read as the function rung's. Only where the function is most of its
file (80% of its code lines, imports aside): there the whole file would be the same request again.

Measured (docs/decisions/2026-11-ablation.md, "anew"): removed once with "the whole file" on 19 cells
that gave no green; then, on the 21 model-decided HumanEvalFix tasks, it gave 2 right greens the ladder
without it did not (seed 1301) and, against main at seed 1302, 5 greens more: 4 right, 1 wrong.
"""

from __future__ import annotations

from greenloop.agent.changes.working_copy import WorkingCopy
from greenloop.agent.repair.approach import Approach
from greenloop.agent.repair.ladder_rung import LadderState, Rung, target_of
from greenloop.agent.repair.rungs.function import FunctionForm
from greenloop.agent.repair.splice import Target

MOSTLY = 0.8  # the function's share of its file's code lines above which the file is the function


class AnewForm(FunctionForm):
    """The function form, asked to write the function anew from the tests rather than find the bug."""

    task = "repair_task_anew"


ANEW = AnewForm()


class Anew(Rung):
    name = "anew"

    def applies(self, state: LadderState) -> list[Approach]:
        top = target_of(state.functions[0]) if state.functions else None
        if top is None or not mostly(state.copy, top):
            return []
        return [Approach(ANEW, top, "the top-ranked function, written anew from the tests")]


def mostly(copy: WorkingCopy, target: Target) -> bool:
    """The function is most of its file's code (imports, comments and blank lines aside)."""
    rows = (copy.read(target.path) or "").splitlines()
    code = [r for r in rows if r.strip() and not r.lstrip().startswith(("import ", "from ", "#"))]
    return (target.end_line - target.start_line + 1) >= MOSTLY * len(code)


RUNG = Anew()
