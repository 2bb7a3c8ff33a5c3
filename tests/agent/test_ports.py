"""The sandbox port: what the sandbox refuses is a rejected action, told to the model; a run never ends in a crash."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from greenloop.agent import FixRequest, fix, run_tests
from greenloop.agent.events import CandidateTested, EnvironmentChanged
from greenloop.errors import GreenloopError
from tests.agent.conftest import FIX_ADD, collect, plan, write_project

pytestmark = pytest.mark.docker


async def test_a_plan_that_installs_what_the_sandbox_refuses_is_told_why_and_repaired(
    calc_project: Path, scripted_llm: Any, plan_strategy: Any
) -> None:
    editable = {"kind": "install", "packages": ["-e ."]}  # pip's option, not a package: the sandbox refuses it
    scripted_llm.script(plan(editable), plan(FIX_ADD), step="debug_plan", repeat=False)
    events, done = await collect(fix(FixRequest(calc_project), plan_strategy(calc_project, loop={"diagnosis": False})))
    assert done.outcome == "green", done.summary + done.evidence
    [refused] = [e for e in events if isinstance(e, EnvironmentChanged)]
    assert (refused.action, refused.detail, refused.ok) == ("install", "-e .", False)
    assert refused.output.startswith("refused: ") and "not a package spec" in refused.output
    repair = scripted_llm.requests_for("debug_plan")[1].messages[-1]["content"]
    assert "install '-e .' refused" in repair and "not a package spec" in repair  # the reason reached the model
    assert done.changes.packages == []


async def test_a_candidate_install_the_sandbox_refuses_is_rejected_and_the_ladder_goes_on(
    tmp_path: Path, scripted_llm: Any, make_settings: Any
) -> None:
    # `No module named 'données'`: the install route's package name is not ASCII, which the sandbox refuses
    ws = write_project(tmp_path / "ws", {
        "calc.py": "def add(a, b):\n    import données\n\n    return a + b\n",
        "test_calc.py": "from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n",
    })
    scripted_llm.script("```python\ndef add(a, b):\n    return a + b\n```\n", step="repair_function")
    events, done = await collect(fix(FixRequest(ws), make_settings(ws, loop={"strategy": "candidates"})))
    assert done.outcome == "green", done.summary + done.evidence
    install = [e for e in events if isinstance(e, CandidateTested) and e.route == "install"]
    assert [(e.status, e.target) for e in install] == [("rejected", "install données")]
    assert "refused" in install[0].reason and "not a package spec" in install[0].reason


async def test_tests_that_cannot_run_are_a_greenloop_error(tmp_path: Path, make_settings: Any) -> None:
    ws = write_project(tmp_path / "ws", {"notes.txt": "no code here\n"})
    with pytest.raises(GreenloopError, match="Cannot tell the workspace's language"):
        await run_tests(ws, make_settings(ws))
    with pytest.raises(GreenloopError, match="not a directory"):
        await run_tests(tmp_path / "missing", make_settings(ws))
