"""A bug in two defs (both must change for any test to pass) goes green through one request that shows both
(rungs/several.py; real Docker engine, real HTTP to the scripted model)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from greenloop.agent import FixRequest, fix
from tests.agent.conftest import collect, write_project

pytestmark = pytest.mark.docker

PROJECT = {
    "units.py": "def to_cm(metres):\n    return metres * 10\n",
    "area.py": "from units import to_cm\n\n\ndef area_cm(width, height):\n    return to_cm(width) + to_cm(height)\n",
    "tests/test_area.py": "from area import area_cm\n\n\ndef test_area():\n    assert area_cm(1, 2) == 20000\n",
}
BOTH = ("A metre is 100 cm, and an area multiplies.\n```python\ndef to_cm(metres):\n    return metres * 100\n```\n\n"
        "```python\ndef area_cm(width, height):\n    return to_cm(width) * to_cm(height)\n```\n")


async def test_a_two_def_bug_goes_green_through_one_request(tmp_path: Path, scripted_llm: Any,
                                                            make_settings: Any) -> None:
    ws = write_project(tmp_path / "ws", PROJECT)
    together = scripted_llm.script(BOTH, contains="## The code to fix: 2 definitions")
    scripted_llm.script("I find no bug in the code shown.")  # one def at a time: nothing to change alone
    settings = make_settings(ws, loop={"candidates": 1, "max_iterations": 8})
    _, done = await collect(fix(FixRequest(ws), settings))
    assert done.outcome == "green", done.summary + done.evidence
    assert together.hits == 1
    assert sorted(c.path for c in done.changes.files) == ["area.py", "units.py"]
    assert "+    return to_cm(width) * to_cm(height)" in done.changes.diff and "+    return metres * 100" in done.changes.diff
    asked = [r for r in scripted_llm.requests if "## The code to fix: 2 definitions" in str(r.messages[-1]["content"])]
    prompt = str(asked[0].messages[-1]["content"])
    assert "`to_cm` in `units.py`" in prompt and "`area_cm` in `area.py`" in prompt


# The second def is a helper in another file that the top def calls: the ranking keeps only the top def
# (`top_k` 1 stands for a large project, where such a helper ranks far down), so it is reached only
# because the failing test ran it (the coverage pass) through the top def's call (retrieval/related.py).
CALLEE = {
    "texts/trim.py": "def shorten(text, width):\n    \"\"\"The first `width` characters.\"\"\"\n    return text[:width - 1]\n",
    "report.py": "from texts.trim import shorten\n\n\ndef headline(title, width):\n"
                 "    return shorten(title, width).lower()\n",
    "tests/test_report.py": "from report import headline\n\n\ndef test_headline():\n"
                            "    assert headline('abcdef', 3) == 'ABC'\n",
}
CALLEE_BOTH = ("A headline is upper case, and the cut keeps `width` characters.\n```python\n"
               "def headline(title, width):\n    return shorten(title, width).upper()\n```\n\n```python\n"
               "def shorten(text, width):\n    \"\"\"The first `width` characters.\"\"\"\n    return text[:width]\n```\n")


async def test_a_callee_outside_the_ranked_code_is_shown_with_the_top_def(tmp_path: Path, scripted_llm: Any,
                                                                          make_settings: Any) -> None:
    ws = write_project(tmp_path / "ws", CALLEE)
    together = scripted_llm.script(CALLEE_BOTH, contains="## The code to fix: 2 definitions")
    scripted_llm.script("I find no bug in the code shown.")  # one def at a time: nothing to change alone
    settings = make_settings(ws, loop={"candidates": 1, "max_iterations": 8}, retrieval={"top_k": 1})
    events, done = await collect(fix(FixRequest(ws), settings))
    assert done.outcome == "green", done.summary + done.evidence
    assert together.hits == 1
    assert sorted(c.path for c in done.changes.files) == ["report.py", "texts/trim.py"]
    found = next(e for e in events if getattr(e, "kind", "") == "locations").locations
    assert [loc["symbol"] for loc in found if loc["role"] == "target"] == ["headline"]  # the helper is not ranked
    assert any(loc["symbol"] == "shorten" and loc["role"] == "callee" for loc in found)
    asked = [r for r in scripted_llm.requests if "## The code to fix: 2 definitions" in str(r.messages[-1]["content"])]
    prompt = str(asked[0].messages[-1]["content"])
    assert "`headline` in `report.py`" in prompt and "`shorten` in `texts/trim.py`" in prompt
