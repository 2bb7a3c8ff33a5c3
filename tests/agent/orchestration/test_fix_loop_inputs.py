"""The fix loop on awkward input: a test that hangs, a file with mixed line endings (real Docker, scripted model).

The model is scripted for both ways the loop asks for a fix (a JSON plan, or a function in a code
block for a candidate round), so these tests hold whichever `loop.strategy` is the default.
"""

from __future__ import annotations

import re
import time
from pathlib import Path
from typing import Any

import pytest

from greenloop.agent import FixRequest, apply_changes, fix
from greenloop.agent.events import LocationsFound
from greenloop.agent.events import TestsRan as RanEvent
from tests.agent.conftest import collect, plan

pytestmark = pytest.mark.docker

LOOPS = (
    "def total(values):\n    result = 0\n    i = 0\n    while i < len(values):\n"
    "        result += values[i]\n    return result\n"
)
LOOPS_TEST = "from totals import total\n\n\ndef test_total():\n    assert total([1, 2, 3]) == 6\n"
STEP = {"kind": "edit", "path": "totals.py", "search": "        result += values[i]\n",
        "replace": "        result += values[i]\n        i += 1\n"}
TOTAL = ("i never grows.\n```python\ndef total(values):\n    result = 0\n    i = 0\n    while i < len(values):\n"
         "        result += values[i]\n        i += 1\n    return result\n```\n")
ADD = "def add(a, b):\n    # the sum\n    return a + b\n"


def fix_prompt(scripted_llm: Any) -> str:
    """The first request that asked for a fix (a plan or a candidate), as one text."""
    asked = [r for step in ("debug_plan", "repair_function") for r in scripted_llm.requests_for(step)]
    return "\n".join(m["content"] for m in asked[0].messages)


async def test_a_hanging_test_ends_at_its_timeout_and_the_model_sees_where_it_hung(
    tmp_path: Path, scripted_llm: Any, make_settings: Any
) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "totals.py").write_text(LOOPS)
    (ws / "test_totals.py").write_text(LOOPS_TEST)
    scripted_llm.script("The loop never advances i.", step="diagnosis")
    scripted_llm.script(plan(STEP, diagnosis="i never grows"), step="debug_plan")
    scripted_llm.script(TOTAL, step="repair_function")
    settings = make_settings(ws, sandbox={"test_case_timeout": 3, "test_timeout": 120})
    start = time.monotonic()
    events, done = await collect(fix(FixRequest(ws), settings))
    assert done.outcome == "green", done.summary
    assert time.monotonic() - start < 90  # the baseline run took ~3 s, not the run's 120 s
    baseline = next(e for e in events if isinstance(e, RanEvent))
    assert baseline.failed == 1 and baseline.duration < 30
    assert "Timeout" in baseline.failures[0]["message"]
    top = next(e for e in events if isinstance(e, LocationsFound)).locations[0]
    assert (top["path"], top["symbol"]) == ("totals.py", "total")  # retrieval follows the frames to the loop
    prompt = fix_prompt(scripted_llm)
    assert "Timeout" in prompt and re.search(r"totals\.py:[45]: ", prompt)  # the stack where it hung: the loop


async def test_a_mixed_endings_file_is_fixed_and_applied_with_its_endings_kept(
    tmp_path: Path, scripted_llm: Any, make_settings: Any
) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    calc = b"def add(a, b):\r\n    return a - b\r\n\r\n\r\ndef mul(a, b):\n    return a * b\r\n"
    (ws / "calc.py").write_bytes(calc)
    (ws / "test_calc.py").write_bytes(
        b"from calc import add, mul\r\n\r\n\r\ndef test_add():\r\n    assert add(2, 3) == 5\r\n")
    scripted_llm.script("add subtracts.", step="diagnosis")
    scripted_llm.script(plan({"kind": "edit", "path": "calc.py", "search": "def add(a, b):\n    return a - b\n",
                              "replace": ADD}), step="debug_plan")
    scripted_llm.script(f"```python\n{ADD}```\n", step="repair_function")
    _, done = await collect(fix(FixRequest(ws), make_settings(ws)))
    assert done.outcome == "green", done.summary
    assert apply_changes(ws, done.changes) == ["calc.py"]
    # the edited and new lines take the dominant CRLF; the untouched LF line keeps its LF
    assert (ws / "calc.py").read_bytes() == calc.replace(b"    return a - b\r\n",
                                                         b"    # the sum\r\n    return a + b\r\n")
