"""Adding a rung touches only its own module and `ladder.py`: a rung with its own form (how it asks the model, how it
reads a reply, its data on the form), defined here as its module would be, put in a copy of the ladder
(`Ladder.with_rung`), and a real fix run going through it: the scripted model over real HTTP, the Docker sandbox."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from greenloop.agent import FixRequest, fix
from greenloop.agent.changes.testfiles import TestFiles
from greenloop.agent.changes.working_copy import WorkingCopy
from greenloop.agent.events import CandidateAsked, RoundEnded
from greenloop.agent.plan import DebugPlan, EditAction
from greenloop.agent.prompting.shows import RequestShows
from greenloop.agent.repair import ladder
from greenloop.agent.repair.approach import Approach, Form, ReplyRejected
from greenloop.agent.repair.ladder_rung import LadderState, Rung, target_of
from greenloop.retrieval import RepoIndex
from greenloop_sandbox import TestReport
from tests.agent.conftest import CALC_TEST, collect

# --- the rung's module: "one line", the top-ranked function's last line asked for again --------------------------

WHY = "the top function's last line, asked for alone"


@dataclass(frozen=True)
class OneLineForm(Form):
    """The one line asked for again; its data (the line) lives on the form, not on `Approach`."""

    line: int = 0
    route = "line"

    def label(self, approach: Approach) -> str:
        return f"line {self.line} of {approach.target.path}"

    def prompt(self, approach: Approach, copy: WorkingCopy, index: RepoIndex, report: TestReport, tests: TestFiles,
               values: dict[str, str], workspace: Path, *, shows: RequestShows | None = None) -> str:
        row = (copy.read(approach.target.path) or "").splitlines()[self.line - 1]
        return f"Line {self.line} of {approach.target.path} is wrong:\n{row}\nGive the corrected line only."

    def read(self, approach: Approach, copy: WorkingCopy, reply: str, is_test: Callable[[str], bool]) -> DebugPlan:
        row = (copy.read(approach.target.path) or "").splitlines()[self.line - 1]
        new = reply.strip("`\n")
        if not new.strip() or new == row:
            raise ReplyRejected("the reply gives no other line")
        return DebugPlan(diagnosis="one line", actions=[EditAction(path=approach.target.path, search=row, replace=new)])


class OneLine(Rung):
    name = "one line"

    def applies(self, state: LadderState) -> list[Approach]:
        return [Approach(OneLineForm(line=loc.end_line), target_of(loc), WHY) for loc in state.functions[:1]]


RUNG = OneLine()

# --- the test ------------------------------------------------------------------------------------------------------


async def test_a_rung_put_in_a_copy_of_the_ladder_is_a_round_of_a_real_fix_run(
    calc_project: Path, scripted_llm: Any, make_settings: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    standard = ladder.LADDER
    added = standard.with_rung(RUNG, before="function")
    assert [e.name for e in added.rungs] == ["install", "missing name", "broken file", "properties", "one line",
                                             *[e.name for e in standard.rungs][4:]]
    assert added.before_round == standard.before_round and added.on_green == standard.on_green  # the steps as they were
    monkeypatch.setattr(ladder, "LADDER", added)  # the one line of ladder.py

    scripted_llm.script("    return a + b", step="repair_line")
    scripted_llm.script("```python\ndef add(a, b):\n    return a * b\n```\n", step="repair_function")
    settings = make_settings(calc_project, loop={"candidates": 2, "max_iterations": 3})
    events, done = await collect(fix(FixRequest(calc_project), settings))
    assert done.outcome == "green" and done.iterations == 1, done.summary + done.evidence
    assert "-    return a - b\n+    return a + b" in done.changes.diff
    rounds = [(e.approach, e.why, e.ended) for e in events if isinstance(e, RoundEnded)]
    assert rounds == [("line 2 of calc.py", WHY, "green")]
    asked = [e for e in events if isinstance(e, CandidateAsked)]
    assert {e.route for e in asked} == {"line"} and all(e.seed is not None for e in asked)  # asked of the model
    requests = scripted_llm.requests_for("repair_line")
    assert requests and requests[0].body["messages"][-1]["content"].startswith("Line 2 of calc.py is wrong:\n"
                                                                                "    return a - b\n")
    assert scripted_llm.requests_for("repair_function") == []
    assert (calc_project / "test_calc.py").read_text() == CALC_TEST

    # the new rung has a name like any other: `loop.rungs_off` turns it off, and the ladder is as it was
    line_requests = len(requests)
    off = make_settings(calc_project, loop={"candidates": 2, "max_iterations": 1, "rungs_off": ["one line"]})
    events, done = await collect(fix(FixRequest(calc_project), off))
    assert [e.why for e in events if isinstance(e, RoundEnded)] == ["the top-ranked function"]
    assert done.outcome == "budget" and "line" not in {e.route for e in events if isinstance(e, CandidateAsked)}
    assert len(scripted_llm.requests_for("repair_line")) == line_requests
