"""Any project end to end: its own test command and Dockerfile, its ignore files, and its bad input
(real Docker engine, real HTTP to the scripted model)."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

from greenloop.agent import FixRequest, fix
from greenloop.agent.changes.working_copy import WorkingCopy
from greenloop.agent.events import TestsRan
from greenloop.agent.prompting.material import PromptCodeBuilder
from tests.agent.conftest import collect, tree_bytes, write_project

pytestmark = pytest.mark.docker

RIGHT = "It subtracts instead of adding.\n```python\ndef add(a, b):\n    return a + b\n```\n"
# Not the python template's layout: code under src/, checks a plain script, run by make.
MAKE_PROJECT = {
    "Makefile": "check:\n\t@test ! -e notes/secret.txt || (echo 'an ignored file reached the sandbox'; exit 9)\n"
                "\tpython3 checks/run_checks.py\n",
    "src/calc.py": "def add(a, b):\n    return a - b\n",
    "checks/run_checks.py": "import sys\n\nsys.path.insert(0, 'src')\nfrom calc import add\n\n"
                            "assert add(2, 3) == 5, f'add(2, 3) is {add(2, 3)}'\nprint('all checks passed')\n",
    ".gitignore": "notes/\n*.local.py\n",
    "notes/secret.txt": "IGNORED_SECRET\n",
    "src/calc.local.py": "def add(a, b):  # IGNORED_COPY\n    return a + b\n",
    "greenloop.toml": '[project]\ntest_command = "make check"\n\n[loop]\ntest_paths = ["checks/*"]\n',
    ".greenloop/Dockerfile": "ARG BASE\nFROM ${BASE}\nUSER root\nCOPY make /usr/local/bin/make\nUSER sandbox\n",
}


@pytest.fixture
def make_project(tmp_path: Path) -> Path:
    """The sample project, with this machine's `make` in its Dockerfile's folder (the images have none,
    and nothing is fetched from the network: the host is Debian bookworm, as the images are)."""
    host_make = shutil.which("make")
    if host_make is None:
        pytest.skip("no `make` on this machine to put into the sample project's image")
    ws = write_project(tmp_path / "make project", MAKE_PROJECT)
    shutil.copy(host_make, ws / ".greenloop" / "make")
    return ws


async def test_a_make_check_project_is_fixed_end_to_end(make_project: Path, scripted_llm: Any,
                                                        make_settings: Any) -> None:
    scripted_llm.script(RIGHT, step="repair_function")
    scripted_llm.script(RIGHT, step="repair_file")
    before = tree_bytes(make_project)
    events, done = await collect(fix(FixRequest(make_project), make_settings(make_project)))
    assert done.outcome == "green", done.summary + done.evidence
    assert [c.path for c in done.changes.files] == ["src/calc.py"] and "+    return a + b" in done.changes.diff
    assert tree_bytes(make_project) == before
    ran = [e for e in events if isinstance(e, TestsRan)]
    assert ran[0].failed == 1 and ran[-1].passed == 1
    # the failure's frames came from make's output; the model saw the code, never the ignored files
    requests = [r for step in ("repair_function", "repair_file") for r in scripted_llm.requests_for(step)]
    prompt = "\n".join(str(m["content"]) for r in requests for m in r.messages)
    assert "return a - b" in prompt and "add(2, 3) is -1" in prompt
    assert "IGNORED_COPY" not in prompt and "IGNORED_SECRET" not in prompt
    builder = PromptCodeBuilder(use_retrieval=True, budget_tokens=3000, top_k=8)  # the loop's index, fed as it is
    await builder.build(WorkingCopy.from_workspace(make_project), [])
    assert "src/calc.py" in builder.index and "checks/run_checks.py" in builder.index
    assert "src/calc.local.py" not in builder.index and "notes/secret.txt" not in builder.index


async def test_a_test_command_that_is_not_there_is_the_users_to_fix(tmp_path: Path, scripted_llm: Any,
                                                                    make_settings: Any) -> None:
    ws = write_project(tmp_path / "ws", {"calc.py": "def add(a, b):\n    return a - b\n",
                                         "greenloop.toml": '[project]\ntest_command = "nosuchtool check"\n'})
    before = tree_bytes(ws)
    _, done = await collect(fix(FixRequest(ws), make_settings(ws)))
    assert done.outcome == "error"
    assert "project.test_command `nosuchtool check` could not be run" in done.summary
    assert "not found" in done.summary and "project.setup" in done.summary
    assert scripted_llm.requests == [] and tree_bytes(ws) == before


async def test_a_test_command_that_never_ends_is_stopped_and_named(tmp_path: Path, scripted_llm: Any,
                                                                   make_settings: Any) -> None:
    ws = write_project(tmp_path / "ws", {"calc.py": "def add(a, b):\n    return a - b\n",
                                         "greenloop.toml": '[project]\ntest_command = "echo waiting; sleep 600"\n'})
    _, done = await collect(fix(FixRequest(ws), make_settings(ws, sandbox={"test_timeout": 3})))
    assert done.outcome == "error"
    assert "ran longer than" in done.summary and "sandbox.test_timeout" in done.summary
    assert "waiting" in done.summary and scripted_llm.requests == []


async def test_odd_ignore_patterns_and_a_broken_dockerfile_end_the_run_with_what_to_fix(
    tmp_path: Path, scripted_llm: Any, make_settings: Any
) -> None:
    ws = write_project(tmp_path / "ws", {"calc.py": "def add(a, b):\n    return a - b\n",
                                         "test_calc.py": "from calc import add\n\ndef test_add():\n    assert add(1, 1) == 2\n",
                                         ".greenloopignore": "*.tmp\n[z-a]\n"})
    before = tree_bytes(ws)
    _, done = await collect(fix(FixRequest(ws), make_settings(ws)))
    assert done.outcome == "error" and ".greenloopignore, line 2" in done.summary
    (ws / ".greenloopignore").write_text("*.tmp\n")
    write_project(ws, {".greenloop/Dockerfile": "ARG BASE\nFROM ${BASE}\nRUN echo the-step-that-breaks && exit 4\n"})
    _, done = await collect(fix(FixRequest(ws), make_settings(ws)))
    assert done.outcome == "error" and "Building .greenloop/Dockerfile failed" in done.summary
    assert "the-step-that-breaks" in done.summary
    assert {k: v for k, v in tree_bytes(ws).items() if k in before} == {
        **before, ".greenloopignore": b"*.tmp\n"}
    assert scripted_llm.requests == []
