"""Whole-file rewrites (`loop.rewrite_lines`): once edits to a small file keep missing, the model writes it whole."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from greenloop.agent import FixRequest, fix
from greenloop.agent.events import EditApplied, EditRejected, Message, PlanMade
from tests.agent.conftest import CALC, collect, plan, tree_bytes


@pytest.fixture
def make_settings(plan_strategy: Any) -> Any:
    """These tests are about the plan strategy (one JSON DebugPlan per iteration)."""
    return plan_strategy


# Qwen2.5-Coder 0.5B's kind of edit: search text that is not in the file, sent back unchanged on repair
WRONG = {"kind": "edit", "path": "calc.py", "search": "    return b - a  # nope", "replace": "    return a + b"}
FIXED = CALC.replace("return a - b", "return a + b")


def settings_for(make_settings: Any, project: Path, rewrite_lines: int) -> Any:
    loop = {"diagnosis": False, "max_iterations": 1, "rewrite_lines": rewrite_lines}
    return make_settings(project, backend="local", loop=loop)


async def test_a_small_file_whose_edit_keeps_missing_is_written_whole(
    calc_project: Path, scripted_llm: Any, make_settings: Any
) -> None:
    scripted_llm.script(plan(WRONG), step="debug_plan")
    scripted_llm.script(f"Here it is:\n```python\n{FIXED}```\n", step="rewrite")
    before = tree_bytes(calc_project)
    events, done = await collect(fix(FixRequest(calc_project), settings_for(make_settings, calc_project, 50)))

    assert done.outcome == "green", done.summary + done.evidence
    assert [c.path for c in done.changes.files] == ["calc.py"]
    assert tree_bytes(calc_project) == before  # a proposal until the person accepts it
    asked = scripted_llm.requests_for("rewrite")
    assert len(asked) == 1 and len(scripted_llm.requests_for("debug_plan")) == 2  # the plan, one repair
    prompt = asked[0].messages[-1]["content"]
    assert "## The file to correct: `calc.py`" in prompt and CALC.rstrip("\n") in prompt  # the file as it is
    assert "not in the file" in prompt  # why the edits failed
    assert "test_add" in prompt  # the failing test
    assert asked[0].response_format is None  # a file, not JSON
    assert any(isinstance(e, Message) and "asking for the whole file" in e.text for e in events)
    write = [e for e in events if isinstance(e, PlanMade)][-1].plan.actions[0]
    assert write.kind == "write" and write.path == "calc.py"
    assert [e.action for e in events if isinstance(e, EditApplied)] == ["write"]


async def test_no_rewrite_unless_asked_for_and_none_of_a_longer_file(
    calc_project: Path, scripted_llm: Any, make_settings: Any
) -> None:
    scripted_llm.script(plan(WRONG), step="debug_plan")
    for lines in (0, CALC.count("\n") - 1):  # off (the default), and a limit below the file's length
        _, done = await collect(fix(FixRequest(calc_project), settings_for(make_settings, calc_project, lines)))
        assert done.outcome != "green"
    assert not scripted_llm.requests_for("rewrite")


async def test_an_unusable_rewrite_changes_nothing_and_says_why(
    calc_project: Path, scripted_llm: Any, make_settings: Any
) -> None:
    scripted_llm.script(plan(WRONG), step="debug_plan")
    prose = "Sure! Change the minus sign in add to a plus sign and the tests will pass."
    broken = "```python\ndef add(a, b:\n    return a + b\n```\n"
    scripted_llm.script(prose, broken, step="rewrite", repeat=False)
    for why in ("rewrite of calc.py was not usable: the reply for calc.py was prose", "would introduce a syntax error"):
        events, done = await collect(fix(FixRequest(calc_project), settings_for(make_settings, calc_project, 50)))
        assert done.outcome != "green" and done.changes.files == []
        said = json.dumps([e.model_dump() for e in events if isinstance(e, Message | EditRejected)])
        assert why in said, said
    assert len(scripted_llm.requests_for("rewrite")) == 2
