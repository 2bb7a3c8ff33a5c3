"""The environment step before the rounds, end to end (real Docker engine, real HTTP to the scripted model):
a removed standard-library name stops the run, an old conftest gets an older pytest, a src layout imports."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from greenloop.agent import FixRequest, fix
from greenloop.agent.events import EnvironmentReady, IterationStarted, Message, TestsRan
from greenloop.cli import main
from tests.agent.conftest import collect, tree_bytes, write_project

pytestmark = pytest.mark.docker


async def one_round(ws: Path, scripted_llm: Any, make_settings: Any, reply: str = "no idea",
                    test_ids: list[str] | None = None) -> tuple[list[Any], Any, EnvironmentReady, Any]:
    """A fix run of one round on `ws`, the model scripted to `reply`: its events, its Done, the environment step's
    event and the first test run (None when none ran)."""
    scripted_llm.script(reply)
    events, done = await collect(fix(FixRequest(ws, test_ids=test_ids), make_settings(ws, loop={"max_iterations": 1})))
    ready = next(e for e in events if isinstance(e, EnvironmentReady))
    return events, done, ready, next((e for e in events if isinstance(e, TestsRan)), None)


async def test_a_removed_stdlib_name_stops_the_run_before_any_candidate(tmp_path: Path, scripted_llm: Any,
                                                                        make_settings: Any) -> None:
    ws = write_project(tmp_path / "ws", {
        "sig.py": "import inspect\n\n\ndef arity(f):\n    return len(inspect.getargspec(f).args)\n",
        "test_sig.py": "from sig import arity\n\n\ndef test_arity():\n    assert arity(lambda a, b: a) == 2\n"})
    before = tree_bytes(ws)
    events, done = await collect(fix(FixRequest(ws), make_settings(ws)))
    assert done.outcome == "environment", done.summary
    assert "removed api at sig.py:5" in done.summary
    assert "has no attribute 'getargspec'" in done.summary and "Python 3.10 or older" in done.summary
    ready = [e for e in events if isinstance(e, EnvironmentReady)]
    assert len(ready) == 1 and ready[0].problem is not None and ready[0].problem.file == "sig.py"
    assert not [e for e in events if isinstance(e, IterationStarted)]  # no round
    assert scripted_llm.requests == [] and tree_bytes(ws) == before


def test_the_cli_exits_3_and_names_file_line_and_cause(tmp_path: Path, scripted_llm: Any,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    ws = write_project(tmp_path / "ws", {
        "conf.py": "from collections import Mapping\n\nDEFAULTS = {}\n",
        "test_conf.py": "from conf import DEFAULTS\n\n\ndef test_empty():\n    assert DEFAULTS == {}\n"})
    code = main(["fix", str(ws), "--base-url", scripted_llm.base_url, "--sandbox", "docker"])
    out = capsys.readouterr()
    assert code == 3, out.out + out.err
    text = out.out + out.err
    assert "conf.py:1" in text and "cannot import name 'Mapping' from 'collections'" in text
    assert "removed api" in text and "project.image" in text
    flat = " ".join(text.split())  # the terminal wraps long lines
    assert "environment: no packages of the project's; pytest 7.2.1 (the sandbox's); the tests cannot run" in flat
    assert scripted_llm.requests == []


CALC_TESTS = {"calc.py": "def add(a, b):\n    return a - b\n",
              "test_calc.py": "from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n\n\n"
                              "def test_zero():\n    assert add(0, 0) == 0\n"}


async def test_a_conftest_only_old_pytest_accepts_gets_an_older_pytest(tmp_path: Path, scripted_llm: Any,
                                                                       make_settings: Any) -> None:
    # `pytest.collect` went in pytest 7: the sandbox's pytest 7.2 refuses this conftest when it loads
    ws = write_project(tmp_path / "ws", {
        "conftest.py": "import pytest\n\nItem = pytest.collect.Item\n", **CALC_TESTS})
    _, done, ready, first = await one_round(ws, scripted_llm, make_settings)
    assert ready.problem is None, ready.lines
    assert ready.test_tool == "pytest 6.2.5 (the newest that runs the tests)", ready.lines
    assert any("refuses the tests" in line and "has no attribute collect" in line for line in ready.lines)
    assert (first.passed, first.failed) == (1, 1)  # the tests ran: the code's own failure is left for the rounds
    assert done.outcome != "environment"


async def test_a_conftest_only_pytest_3_accepts_gets_it_with_plain_asserts(tmp_path: Path, scripted_llm: Any,
                                                                          make_settings: Any) -> None:
    # `Node.get_marker` went in pytest 4, and pytest 3's assertion rewriting does not compile on Python 3.11:
    # the search goes down the majors below the refused one, and the runner turns the rewriting off
    ws = write_project(tmp_path / "ws", {
        "conftest.py": "def pytest_runtest_setup(item):\n    if item.get_marker('slow'):\n        pass\n",
        **CALC_TESTS})
    events, done, ready, first = await one_round(ws, scripted_llm, make_settings,
                                                 reply="```python\ndef add(a, b):\n    return a + b\n```\n")
    assert ready.problem is None, ready.lines
    assert ready.test_tool.startswith("pytest 3.") and ready.test_tool.endswith("(the newest that runs the tests)")
    assert any("runs with plain asserts" in line for line in ready.lines), ready.lines
    tried = [line for line in ready.lines if re.match(r"pytest \d+\.\d+\.\d+: ", line)]
    assert [line.split(":")[0] for line in tried][1:4] == ["pytest 6.2.5", "pytest 5.4.3", "pytest 4.6.11"], tried
    assert (first.passed, first.failed) == (1, 1)  # the tests ran: the code's own failure is left for the rounds
    # the rounds' candidate runs (warm runs, on by default) and the coverage pass run it with plain asserts too
    assert done.outcome == "green", done.summary
    assert not any(isinstance(e, Message) and "pytest ran no test" in e.text for e in events)


async def test_a_conftest_no_pytest_accepts_stops_after_the_bound(
        tmp_path: Path, scripted_llm: Any, make_settings: Any) -> None:
    ws = write_project(tmp_path / "ws", {
        "conftest.py": "def pytest_runtest_setup(item):\n    if item.get_no_such_marker('slow'):\n        pass\n",
        **CALC_TESTS})
    events, done = await collect(fix(FixRequest(ws), make_settings(ws)))
    assert done.outcome == "environment", done.summary
    ready = next(e for e in events if isinstance(e, EnvironmentReady))
    assert ready.problem is not None and ready.problem.problem == "test_tool"
    assert (ready.problem.file, ready.problem.line) == ("conftest.py", 2)
    assert "`pytest<7` in requirements-dev.txt" in done.summary and "set project.image" in done.summary
    tried = [line for line in ready.lines if line.startswith("pytest ") and ":" in line][1:]
    assert 1 <= len(tried) <= 5, ready.lines  # bounded
    assert scripted_llm.requests == []


async def test_a_test_inside_an_init_py_gets_a_pytest_that_takes_its_id(tmp_path: Path, scripted_llm: Any,
                                                                       make_settings: Any) -> None:
    # pytest 7.2 (the sandbox's) answers "not found" for an id inside an `__init__.py`; pytest 8 and later take it
    ws = write_project(tmp_path / "ws", {
        "calc.py": "def add(a, b):\n    return a - b\n",
        "tests/__init__.py": "from calc import add\n\n\nclass TestAdd:\n    def test_add(self):\n"
                             "        assert add(2, 3) == 5\n"})
    _, _, ready, first = await one_round(ws, scripted_llm, make_settings,
                                         test_ids=["tests/__init__.py::TestAdd::test_add"])
    assert ready.problem is None, ready.lines
    assert any("refuses the tests" in line and "__init__.py::" in line for line in ready.lines), ready.lines
    assert ready.test_tool.endswith("(the newest that runs the tests)"), ready.test_tool
    assert (first.passed, first.failed) == (0, 1), first  # the test ran: the code's own bug is the rounds'


async def test_the_projects_own_pytest_pin_wins_over_the_sandboxs(tmp_path: Path, scripted_llm: Any,
                                                                  make_settings: Any) -> None:
    ws = write_project(tmp_path / "ws", {
        "requirements-dev.txt": "pytest==6.2.5\n",
        "conftest.py": "import pytest\n\nItem = pytest.collect.Item\n", **CALC_TESTS})
    _, _, ready, first = await one_round(ws, scripted_llm, make_settings)
    assert ready.summary == "environment: 1 package(s) from requirements-dev.txt; pytest 6.2.5 (the project pins it)"
    assert not any("refuses" in line for line in ready.lines)  # no search: the pin was right from the start
    assert (first.passed, first.failed) == (1, 1)


async def test_a_pin_older_than_the_sandboxs_pytest_needs_is_left_out_and_the_tests_run(
        tmp_path: Path, scripted_llm: Any, make_settings: Any) -> None:
    # black's Pipfile.lock pins attrs 17.4-19.1; installed over the image's, pytest 7.2 stops before any test
    # ran (`attrs() got an unexpected keyword argument 'eq'`): the sandbox's pytest needs attrs>=19.2.0
    ws = write_project(tmp_path / "ws", {"requirements.txt": "attrs==18.1.0\n", **CALC_TESTS})
    _, _, ready, first = await one_round(ws, scripted_llm, make_settings)
    assert ready.problem is None, ready.lines
    assert any(line.startswith("attrs==18.1.0 (requirements.txt) not installed: pytest 7.2.1 (the sandbox's) needs "
                               "attrs>=19.2.0") for line in ready.lines), ready.lines
    assert (first.passed, first.failed) == (1, 1), first  # the tests ran: the code's own bug is the rounds'


async def test_the_pytest_a_projects_range_installed_is_the_one_named(tmp_path: Path, scripted_llm: Any,
                                                                       make_settings: Any) -> None:
    ws = write_project(tmp_path / "ws", {"requirements-dev.txt": "pytest<7\n", **CALC_TESTS})
    _, _, ready, _ = await one_round(ws, scripted_llm, make_settings)
    assert ready.test_tool == "pytest 6.2.5 (the project's range: pytest<7)", ready.lines  # not the image's 7.2.1


async def test_test_code_on_a_removed_name_gets_the_pytest_that_does_not_run_it(tmp_path: Path, scripted_llm: Any,
                                                                                make_settings: Any) -> None:
    # a nose-style module `setup` calling a name Python 3.9 removed: pytest 7 and 8 run it, pytest 9 does not
    ws = write_project(tmp_path / "ws", {
        "calc.py": "def add(a, b):\n    return a - b\n",
        "test_calc.py": "import sys\n\nfrom calc import add\n\n\ndef setup():\n    sys.setcheckinterval(100)\n\n\n"
                        "def test_add():\n    assert add(2, 3) == 5\n"})
    _, done, ready, first = await one_round(ws, scripted_llm, make_settings)
    assert ready.problem is None, ready.lines
    assert ready.test_tool.startswith("pytest 9.") and ready.test_tool.endswith("(the newest that runs the tests)")
    assert any("runs test code that fails here" in line and "setcheckinterval" in line for line in ready.lines)
    assert first.failed == 1 and "assert -1 == 5" in str(first.failures[0])  # the code's own failure, for the rounds
    assert done.outcome != "environment"
