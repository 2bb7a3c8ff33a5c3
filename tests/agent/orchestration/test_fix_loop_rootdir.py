"""A project whose pytest rootdir is not the workspace (`tests/pytest.ini`): its failing tests are rerun by ids
pytest accepts from the workspace root, and a right candidate goes green (real Docker engine, scripted model)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from greenloop.agent import FixRequest, fix
from greenloop.agent.events import CandidateTested, TestsRan
from tests.agent.conftest import collect, write_project

pytestmark = pytest.mark.docker

PROJECT = {
    "cells.py": "def width(text):\n    return len(text)\n\n\ndef pad(text, n):\n    return text + ' ' * (n - width(text))\n",
    "tests/pytest.ini": "[pytest]\n",
    "tests/test_cells.py": "from cells import pad, width\n\n\ndef test_zwj():\n    assert width('a\\u200db') == 2\n\n\n"
                           "class TestPad:\n    def test_plain(self):\n        assert pad('ab', 3) == 'ab '\n",
}
WRONG = "It ignores spaces.\n```python\ndef width(text):\n    return len(text.strip())\n```\n"
RIGHT = ("It counts the zero-width joiner.\n```python\ndef width(text):\n"
         "    return len(text.replace('\\u200d', ''))\n```\n")


async def test_a_tests_folder_with_its_own_pytest_ini_is_fixed(tmp_path: Path, scripted_llm: Any,
                                                                make_settings: Any) -> None:
    ws = write_project(tmp_path / "ws", PROJECT)
    scripted_llm.script(WRONG, RIGHT, step="repair_function", repeat=False)
    named = ["tests/test_cells.py::test_zwj", "tests/test_cells.py::TestPad::test_plain"]  # pytest's rootdir: tests/
    request = FixRequest(ws, test_ids=named)
    events, done = await collect(fix(request, make_settings(ws, loop={"candidates": 1, "small_edits": 0})))
    ran = [e for e in events if isinstance(e, TestsRan)]
    assert ran[0].failed == 1 and ran[0].passed == 1
    assert [f["test_id"] for f in ran[0].failures] == ["tests/test_cells.py::test_zwj"]  # not `test_cells.py::...`
    tested = [e for e in events if isinstance(e, CandidateTested) and e.status == "tested"]
    # each candidate's run of the failing test by its id: the wrong one fails (never "errors"), the right one passes
    assert [(e.failed, e.errors, e.green) for e in tested] == [(1, 0, False), (0, 0, True)]
    assert done.outcome == "green", done.summary + done.evidence
    assert "+    return len(text.replace('\\u200d', ''))" in done.changes.diff
    assert ran[-1].passed == 2 and ran[-1].failed == ran[-1].errors == 0
    assert len(scripted_llm.requests_for("repair_function")) == 2
