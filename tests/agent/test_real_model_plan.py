"""The fix loop's plan step with the real embedded model (opt-in: `pytest -m real_llm`).

Asserts structure only: the model's reply, held to the DebugPlan schema through
llama.cpp's JSON mode and the real plan prompt, validates as a plan. Whether the
plan fixes the bug is the benchmark's business, not this test's.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from greenloop.agent import FixRequest, fix
from greenloop.agent.events import Message, PlanMade
from greenloop.settings import load_settings
from tests.agent.conftest import collect, write_project

pytestmark = [pytest.mark.real_llm, pytest.mark.timeout(600)]


async def test_the_embedded_models_plan_validates_through_the_real_loop(tmp_path: Path) -> None:
    ws = write_project(tmp_path / "ws", {
        "calc.py": "def add(a, b):\n    return a - b\n",
        "test_calc.py": "from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n",
    })
    settings = load_settings(ws, {
        "llm": {"max_tokens": 400, "temperature": 0.0},
        "local_model": {"n_ctx": 4096},
        "sandbox": {"backend": "local"},
        "loop": {"max_iterations": 1, "diagnosis": False, "strategy": "plan"},
        "runs": {"store": str(tmp_path / "runs.sqlite3")},
    })
    events, done = await collect(fix(FixRequest(ws), settings))
    plans = [e for e in events if isinstance(e, PlanMade)]
    invalid = [e.text for e in events if isinstance(e, Message) and "plan was not valid" in e.text]
    assert plans and not invalid, invalid
    assert plans[0].plan.actions, "a plan with no action"
    assert done.outcome in ("green", "budget", "stuck"), done.summary
    assert (ws / "calc.py").read_text() == "def add(a, b):\n    return a - b\n"  # no --apply: untouched
