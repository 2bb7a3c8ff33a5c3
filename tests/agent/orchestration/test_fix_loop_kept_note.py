"""A partial small edit does not hide the original code from the next request (agent/repair/kept_note.py;
real Docker engine, real HTTP to the scripted model)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from greenloop.agent import FixRequest, fix
from tests.agent.conftest import collect, write_project

pytestmark = pytest.mark.docker

# A small edit of the constant (3 -> 2) makes the first test pass, not the second: the state moves to it.
PROJECT = {
    "shop.py": "def total(prices):\n    return sum(prices) * 3\n",
    "tests/test_shop.py": "from shop import total\n\n\ndef test_doubles():\n    assert total([1, 2]) == 6\n\n\n"
                          "def test_empty_costs_one():\n    assert total([]) == 1\n",
}
FIXED = ("The total doubles, and an empty basket costs 1.\n```python\ndef total(prices):\n"
         "    return sum(prices) * 2 if prices else 1\n```\n")


async def test_a_partial_small_edit_does_not_hide_the_original_code(tmp_path: Path, scripted_llm: Any,
                                                                     make_settings: Any) -> None:
    ws = write_project(tmp_path / "ws", PROJECT)
    after = scripted_llm.script(FIXED, contains="## Kept so far")
    scripted_llm.script("I find no bug in the code shown.")
    settings = make_settings(ws, loop={"candidates": 1, "max_iterations": 6, "small_edits": 60})  # small edits on
    events, done = await collect(fix(FixRequest(ws), settings))
    assert done.outcome == "green", done.summary + done.evidence
    assert after.hits >= 1
    moved = [e for e in events if getattr(e, "kind", "") == "round_ended" and e.moved and e.ended != "green"]
    assert moved and "small edits" in moved[0].approach  # the partial state came from a small edit
    asked = [str(r.messages[-1]["content"]) for r in scripted_llm.requests]
    kept = next(p for p in asked if "## Kept so far" in p)
    assert "-    return sum(prices) * 3" in kept and "+    return sum(prices) * 2" in kept  # the original, the change
    assert "return sum(prices) * 2 if prices else 1" in done.changes.diff
