"""The ladder's order is data (`repair/ladder.py`): a rung is one module and one line there, and any rung can be
turned off by name (`loop.rungs_off`). Real HTTP to the scripted model; the local sandbox backend."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from greenloop.agent import FixRequest, fix
from greenloop.agent.changes.testfiles import TestFiles
from greenloop.agent.changes.working_copy import WorkingCopy
from greenloop.agent.events import CandidateAsked, RoundEnded
from greenloop.agent.repair import ladder
from greenloop.retrieval import Location
from greenloop.settings import LoopSettings
from greenloop_sandbox import TestReport
from tests.agent.conftest import CALC, CALC_TEST, collect
from tests.agent.repair import known_fix_rung

WRONG = "```python\ndef add(a, b):\n    return a * b\n```\n"


def _whys(root: Path, **kwargs: Any) -> list[str]:
    copy = WorkingCopy.from_workspace(root)
    top = Location("calc.py", "add", "function", 1, 2, 1.0, "frames")
    nxt = Location("calc.py", "mul", "function", 5, 6, 0.5, "frames")
    return [a.why for a in ladder.ladder([top, nxt], TestReport(failed=1), copy, TestFiles(), **kwargs)]


async def test_a_rung_added_by_one_module_and_one_line_runs_in_its_place(
    calc_project: Path, scripted_llm: Any, make_settings: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    before = _whys(calc_project)
    # the one line: the new rung's place in the order, before the top-ranked function
    monkeypatch.setattr(ladder, "LADDER", ladder.LADDER.with_rung(known_fix_rung.RUNG, before="function"))
    assert _whys(calc_project) == [known_fix_rung.WHY, *before]

    scripted_llm.script(WRONG, step="repair_function")
    settings = make_settings(calc_project, backend="local", loop={"candidates": 2, "max_iterations": 2})
    events, done = await collect(fix(FixRequest(calc_project), settings))
    assert done.outcome == "green" and done.iterations == 1, done.summary + done.evidence
    assert "+    return a + b" in done.changes.diff
    rounds = [e for e in events if isinstance(e, RoundEnded)]
    assert [(r.why, r.ended) for r in rounds] == [(known_fix_rung.WHY, "green")]
    asked = [e for e in events if isinstance(e, CandidateAsked)]
    assert [(e.route, e.seed) for e in asked] == [("blocks", None)]  # its reply known: asked of no model
    assert scripted_llm.requests_for("repair_function") == []


def test_any_rung_can_be_turned_off_by_name(calc_project: Path) -> None:
    whole = _whys(calc_project)
    together = "the top-ranked functions together"  # calc.py's two functions, shown at once (rungs/several.py)
    assert whole == ["the top-ranked function", "the top-ranked function, sampled hotter", "changes in several places",
                     together]
    assert _whys(calc_project, off=["hotter"]) == ["the top-ranked function", "changes in several places", together]
    assert together not in _whys(calc_project, off=["several"])
    assert ladder.unknown_rungs(["hotter", "small edits", "settle"]) == ""
    assert "'hoter'" in ladder.unknown_rungs(["hoter"]) and "'hotter'" in ladder.unknown_rungs(["hoter"])
    said = LoopSettings.model_fields["rungs_off"].description or ""  # the setting's documentation names each
    assert [name for name in ladder.rung_names() if f'"{name}"' not in said] == []


async def test_a_rung_turned_off_is_not_tried_and_a_wrong_name_is_a_clear_error(
    calc_project: Path, scripted_llm: Any, make_settings: Any
) -> None:
    scripted_llm.script(WRONG, step="repair_function")
    off = {"candidates": 1, "max_iterations": 1, "rungs_off": ["small edits"]}
    events, done = await collect(fix(FixRequest(calc_project), make_settings(calc_project, backend="local", loop=off)))
    assert done.outcome == "budget"  # without its small edits, `a - b` is asked of the model, which gets it wrong
    assert not any(isinstance(e, CandidateAsked) and e.route == "small_edits" for e in events)
    assert len(scripted_llm.requests_for("repair_function")) == 1

    wrong = {"rungs_off": ["hoter"]}
    _, done = await collect(fix(FixRequest(calc_project), make_settings(calc_project, backend="local", loop=wrong)))
    assert done.outcome == "error" and "loop.rungs_off names no rung: 'hoter'" in done.summary
    assert (calc_project / "calc.py").read_text() == CALC and (calc_project / "test_calc.py").read_text() == CALC_TEST
