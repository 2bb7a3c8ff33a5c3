"""A failing test that stops on a name a project module lacks (defined nowhere) gets that name added to that module
first, then the real bug fixed (rungs/missing_name.py; real Docker engine, real HTTP to the scripted model)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from greenloop.agent import FixRequest, fix
from tests.agent.conftest import collect, write_project

pytestmark = pytest.mark.docker

ERRORS = 'class AppError(Exception):\n    """Base of the app\'s errors."""\n'
PROJECT = {
    "errors.py": ERRORS,
    "ages.py": "import errors\n\n\ndef parse_age(text):\n    if text.isdigit():\n"
               "        raise errors.MissingThing(text)\n    return int(text)\n",
    # one line: once the name is there, the test stops on the same line (on the real bug), and only
    # getting past the missing name tells the state with it from the one without (progress.py)
    "tests/test_ages.py": "import pytest\n\nimport errors\nfrom ages import parse_age\n\n\ndef test_parse_age():\n"
                          "    pytest.raises(errors.MissingThing, parse_age, 'x')\n",
}
ADDED = ("`MissingThing` is missing.\n```python\nerrors.py\n<<<<<<< SEARCH\n    \"\"\"Base of the app's errors.\"\"\"\n"
         "=======\n    \"\"\"Base of the app's errors.\"\"\"\n\n\nclass MissingThing(AppError):\n"
         "    \"\"\"A value is not there.\"\"\"\n>>>>>>> REPLACE\n```\n")
FIXED = ("The test is the wrong way round.\n```python\ndef parse_age(text):\n    if not text.isdigit():\n"
         "        raise errors.MissingThing(text)\n    return int(text)\n```\n")
ASKED = "## The name the tests need"


async def test_the_name_the_tests_need_is_added_to_its_module_then_the_bug_is_fixed(
        tmp_path: Path, scripted_llm: Any, make_settings: Any) -> None:
    ws = write_project(tmp_path / "ws", PROJECT)
    name = scripted_llm.script(ADDED, contains=ASKED)
    bug = scripted_llm.script(FIXED, contains="def parse_age(text):")
    settings = make_settings(ws, loop={"candidates": 1, "max_iterations": 6, "small_edits": 0})
    _, done = await collect(fix(FixRequest(ws), settings))
    assert done.outcome == "green", done.summary + done.evidence
    assert name.hits == 1 and bug.hits >= 1
    assert sorted(c.path for c in done.changes.files) == ["ages.py", "errors.py"]
    assert "+class MissingThing(AppError):" in done.changes.diff and "+    if not text.isdigit():\n" in done.changes.diff
    first = str(next(r for r in scripted_llm.requests if ASKED in str(r.messages[-1]["content"])).messages[-1]["content"])
    assert "`MissingThing` in `errors`" in first
    assert "## The file to fix: `errors.py`" in first and 'class AppError(Exception):' in first  # the module
    assert "tests/test_ages.py:8: pytest.raises(errors.MissingThing, parse_age, 'x')" in first  # how the test uses it
    assert (ws / "errors.py").read_text() == ERRORS  # the user's files change only on accept


async def test_a_name_the_project_defines_elsewhere_is_not_asked_to_be_added(
        tmp_path: Path, scripted_llm: Any, make_settings: Any) -> None:
    project = {**PROJECT, "things.py": "from errors import AppError\n\n\nclass MissingThing(AppError):\n    pass\n"}
    ws = write_project(tmp_path / "ws", project)
    scripted_llm.script("I find no bug in the code shown.")
    settings = make_settings(ws, loop={"candidates": 1, "max_iterations": 2, "small_edits": 0})
    await collect(fix(FixRequest(ws), settings))
    asked = [str(r.messages[-1]["content"]) for r in scripted_llm.requests]
    assert asked and not any(ASKED in text for text in asked)
    assert any("it is defined in `things.py`" in text for text in asked)  # where_defined points there
