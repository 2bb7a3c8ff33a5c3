"""The one loop driver: every strategy's run ends in exactly one Done, and the driver (or the entry's
first test run) is what makes it. Real HTTP to the scripted model; the local sandbox backend."""

from __future__ import annotations

import inspect
from pathlib import Path
from typing import Any

import pytest

from greenloop.agent import FixRequest, fix
from greenloop.agent.events import Done, Event
from greenloop.agent.orchestration import driver
from greenloop.agent.orchestration.run_context import RunContext
from tests.agent.conftest import FIX_ADD, plan
from tests.support.scripted_llm import server_error

RIGHT = "It subtracts.\n```python\ndef add(a, b):\n    return a + b\n```\n"
WRONG = "```python\ndef add(a, b):\n    return a * b\n```\n"
STEP = {"candidates": "repair_function", "oneshot": "repair_file", "plan": "debug_plan"}
FILE = "```python\ndef add(a, b):\n    return a {op} b\n\n\ndef mul(a, b):\n    return a * b\n```\n"


def _replies(strategy: str, ending: str) -> list[Any]:
    if ending == "model_error":
        return [server_error(500)]
    if strategy == "plan":
        return [plan(FIX_ADD)] if ending == "green" else [plan({**FIX_ADD, "replace": "    return a * b"})]
    if strategy == "oneshot":
        return [FILE.format(op="+" if ending == "green" else "*")]
    return [RIGHT] if ending == "green" else [WRONG]


@pytest.mark.parametrize("strategy", ["candidates", "plan", "oneshot"])
@pytest.mark.parametrize(("ending", "outcome"), [("green", "green"), ("model_error", "error"), ("rounds", "budget")])
async def test_each_strategy_ends_in_exactly_one_done_made_by_the_driver(
    calc_project: Path, scripted_llm: Any, make_settings: Any, monkeypatch: pytest.MonkeyPatch,
    strategy: str, ending: str, outcome: str,
) -> None:
    makers: list[str] = []
    made = RunContext.done

    def done(self: RunContext, *args: Any, **kwargs: Any) -> Done:
        makers.append(inspect.stack()[1].function)
        return made(self, *args, **kwargs)

    monkeypatch.setattr(RunContext, "done", done)
    scripted_llm.script(*_replies(strategy, ending), step=STEP[strategy])
    loop = {"strategy": strategy, "candidates": 1, "small_edits": 0, "max_iterations": 1, "diagnosis": False}
    settings = make_settings(calc_project, backend="local", loop=loop, retrieval={"coverage": False})
    events: list[Event] = [event async for event in fix(FixRequest(calc_project), settings)]

    dones = [e for e in events if isinstance(e, Done)]
    assert len(dones) == 1 and events[-1] is dones[0]
    assert dones[0].outcome == outcome, dones[0].summary + dones[0].evidence
    assert makers == [driver.drive.__name__]
    assert scripted_llm.requests_for(STEP[strategy])  # the strategy's round asked the model
