"""What a function reply can reach (issue 61's plumbing classes): a fix that needs a new import, and a method
of a class nested in a function (real Docker engine, real HTTP to the scripted model)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from greenloop.agent import FixRequest, fix
from tests.agent.conftest import collect, write_project

pytestmark = pytest.mark.docker

IMPORT = {
    "stats.py": "def mean(xs):\n    return sum(xs) // len(xs)\n",
    "tests/test_stats.py": "from stats import mean\n\n\ndef test_mean():\n    assert mean([1, 2]) == 1.5\n",
}
WITH_IMPORT = ("It floors the mean.\n```python\nfrom statistics import fmean\n\n\ndef mean(xs):\n"
               "    return fmean(xs)\n```\n")
NESTED = {
    "counters.py": ("def make_counter(start):\n    class Counter:\n        def __init__(self):\n            self.n = start\n\n"
                    "        def bump(self):\n            self.n -= 1\n            return self.n\n\n    return Counter()\n"),
    "tests/test_counters.py": "from counters import make_counter\n\n\ndef test_bump():\n    assert make_counter(1).bump() == 2\n",
}
BUMP = "It counts down.\n```python\ndef bump(self):\n    self.n += 1\n    return self.n\n```\n"


async def test_a_fix_that_needs_a_new_import_goes_green(tmp_path: Path, scripted_llm: Any, make_settings: Any) -> None:
    ws = write_project(tmp_path / "ws", IMPORT)
    scripted_llm.script(WITH_IMPORT, step="repair_function")
    _, done = await collect(fix(FixRequest(ws), make_settings(ws, loop={"candidates": 1})))
    assert done.outcome == "green", done.summary + done.evidence
    assert "+from statistics import fmean" in done.changes.diff and "+    return fmean(xs)" in done.changes.diff


async def test_a_method_of_a_class_inside_a_function_goes_green(tmp_path: Path, scripted_llm: Any,
                                                                 make_settings: Any) -> None:
    ws = write_project(tmp_path / "ws", NESTED)
    scripted_llm.script(BUMP, step="repair_function")
    _, done = await collect(fix(FixRequest(ws), make_settings(ws, loop={"candidates": 1})))
    assert done.outcome == "green", done.summary + done.evidence
    after = done.changes.files[0].after or ""
    assert "        def bump(self):\n            self.n += 1\n            return self.n\n" in after  # in place, indented
