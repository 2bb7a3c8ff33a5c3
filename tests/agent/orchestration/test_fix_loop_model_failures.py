"""The fix loop when the model server fails or a request outgrows its context window: work is kept."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from greenloop.agent import FixRequest, fix
from greenloop.agent.events import EditRejected, Message, TestsRan
from greenloop.llm.window import _estimate
from tests.agent.conftest import FIX_ADD, collect, plan, write_project
from tests.support.scripted_llm import server_error


@pytest.fixture
def make_settings(plan_strategy: Any) -> Any:
    """These tests are about the plan strategy (one JSON DebugPlan per iteration)."""
    return plan_strategy


TWO_BUGS = {
    "calc.py": "def add(a, b):\n    return a - b\n\n\ndef mul(a, b):\n    return a + b\n",
    "test_calc.py": "from calc import add, mul\n\n\ndef test_add():\n    assert add(2, 3) == 5\n\n\n"
    "def test_mul():\n    assert mul(2, 3) == 6\n",
}
FIX_MUL = {
    "kind": "edit", "path": "calc.py", "search": "def mul(a, b):\n    return a + b", "replace": "def mul(a, b):\n    return a * b"
}


async def test_a_model_server_failing_mid_run_ends_it_with_what_it_reached(
    tmp_path: Path, scripted_llm: Any, make_settings: Any
) -> None:
    # llama-cpp-python dropped the stream of a prompt over its window: the whole generated project was lost
    ws = write_project(tmp_path / "ws", TWO_BUGS)
    scripted_llm.script(plan(FIX_ADD), server_error(500), step="debug_plan", repeat=False)
    settings = make_settings(ws, backend="local", loop={"diagnosis": False, "max_iterations": 3})
    events, done = await collect(fix(FixRequest(ws), settings))

    assert done.outcome == "error"
    assert done.iterations == 1
    assert done.summary.startswith("Stopped in iteration 2: the model call failed; 1 passed, 1 failed")
    assert "500" in done.evidence
    assert [(c.path, "a + b" in c.after) for c in done.changes.files] == [("calc.py", True)]
    errors = [e.text for e in events if isinstance(e, Message) and e.level == "error"]
    assert len(errors) == 1 and errors[0].startswith("The model call failed")
    assert (ws / "calc.py").read_text() == TWO_BUGS["calc.py"]  # offered, not applied


async def test_a_repair_that_would_not_fit_the_window_ends_the_repairs_not_the_run(
    tmp_path: Path, scripted_llm: Any, make_settings: Any
) -> None:
    # a search miss is answered with the whole file: with a long file that outgrows the request itself
    padding = "".join(f"\n\ndef helper_{n}(x):\n    return x + {n}\n" for n in range(120))
    ws = write_project(tmp_path / "ws", {**TWO_BUGS, "calc.py": TWO_BUGS["calc.py"] + padding})
    wrong = {"kind": "edit", "path": "calc.py", "search": "    return b - a  # nope", "replace": "    return a + b"}
    sections = {"loop": {"diagnosis": False, "max_iterations": 3}}
    # first without a window, to measure the plan requests and the repair
    scripted_llm.script(plan(wrong), plan(FIX_ADD), plan(FIX_MUL), step="debug_plan", repeat=False)
    _, done = await collect(fix(FixRequest(ws), make_settings(ws, backend="local", **sections)))
    assert done.outcome == "green", done.summary + done.evidence
    asks = [r.messages for r in scripted_llm.requests_for("debug_plan")]
    assert [len(m) for m in asks] == [2, 4, 2]
    slack = 300  # a third iteration's request carries one more attempt in its history
    needed = max(_estimate(asks[0]), _estimate(asks[2])) + slack
    assert _estimate(asks[1][:2] + asks[1][-1:]) > needed  # even without the reply it repairs
    # then with a window that fits every plan request and not the repair
    reply_room = 64
    scripted_llm.reset()
    scripted_llm.script(plan(wrong), plan(FIX_ADD), plan(FIX_MUL), step="debug_plan", repeat=False)
    llm = {"context_window": needed + reply_room, "max_tokens": reply_room}
    events, done = await collect(fix(FixRequest(ws), make_settings(ws, backend="local", llm=llm, **sections)))

    assert [len(r.messages) for r in scripted_llm.requests_for("debug_plan")] == [2, 2, 2]  # no repair sent
    warned = [e.text for e in events if isinstance(e, Message) and e.level == "warning"]
    assert "The repair request would not fit the model's context window; no more repairs in this iteration." in warned
    assert len([e for e in events if isinstance(e, EditRejected)]) == 1
    assert [(e.passed, e.failed) for e in events if isinstance(e, TestsRan)] == [(0, 2), (1, 1), (2, 0)]
    assert done.outcome == "green" and done.iterations == 3
