"""A package the environment step installed that stops the test tool before any test ran (a plugin today's pytest
cannot load, as pytest-catchlog's `py.builtin`): left out and said, and the tests run. The end-to-end test runs a
real Docker engine, a made-up plugin served by a package index on 127.0.0.1 and real HTTP to the scripted model."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from greenloop.agent import FixRequest, fix
from greenloop.agent.environment import broken_installs, dependency_versions
from greenloop.agent.events import EnvironmentReady, TestsRan
from greenloop_sandbox.report import TestCase, TestFailure, TestReport
from tests.agent.conftest import collect, write_project
from tests.agent.environment.test_locks_and_diagnosis import copy_of
from tests.support.package_index import extra_index, unique_name

STOPPED = ('Error while loading plugin "pytest11".\n'
           "/usr/local/lib/python3.11/site-packages/pluggy/_manager.py:421: in load_setuptools_entrypoints\n"
           "    plugin = ep.load()\n"
           "/usr/local/lib/python3.11/dist-packages/pytest_oldlog.py:266: in <module>\n"
           "    class CallableStr(CallablePropertyMixin, py.builtin.text):\n"
           "E   AttributeError: module 'py' has no attribute 'builtin'\n")


def stopped_report(text: str = STOPPED, ran: bool = False) -> TestReport:
    failure = TestFailure(test_id="<run>", message="the test run wrote no JUnit report (exit code 1)",
                          traceback=text, kind="error")
    cases = [TestCase(test_id="test_app.py::test_add", outcome="failed")] if ran else []
    return TestReport(errors=1, exit_code=1, raw=text, failures=[failure], cases=cases)


def test_the_deepest_library_module_of_a_run_that_ran_no_test_is_read_and_its_owner_among_the_installed() -> None:
    assert broken_installs.stopping_modules(stopped_report()) == ["pytest_oldlog", "pluggy"]  # deepest first
    assert broken_installs.stopping_modules(stopped_report(ran=True)) == []  # a test ran: the tests' own business
    assert broken_installs.stopping_modules(stopped_report("app.py:3: in <module>\nE   NameError: x")) == []
    # a module an ImportError names as lacking a name is the importer's wish (an older release), not a frame
    named = ("ImportError while loading conftest '/ws/conftest.py'.\nconftest.py:1: in <module>\n    from w.url import _c\n"
             "E   ImportError: cannot import name '_c' from 'w.url' (/usr/local/lib/python3.11/dist-packages/w/url.py)\n")
    assert broken_installs.stopping_modules(stopped_report(named)) == []
    # a test module pytest could not collect is an errored case, but no test that ran
    uncollected = TestReport(errors=1, exit_code=2, raw=STOPPED, cases=[TestCase(test_id="test_app.py::test_app",
                             outcome="error")], failures=[TestFailure(test_id="test_app.py::test_app", kind="error",
                             message="collection failure", traceback=STOPPED)])
    assert broken_installs.stopping_modules(uncollected) == ["pytest_oldlog", "pluggy"]
    assert broken_installs.now_missing(stopped_report("E   ModuleNotFoundError: No module named 'pytest_oldlog'"),
                                       "pytest_oldlog")
    owners = 'some warning on stdout\n["pytest-oldlog"]\n'
    assert broken_installs.installed_owner(owners, ["six>=1", "pytest_oldlog"]) == "pytest_oldlog"
    assert broken_installs.installed_owner(owners, ["six>=1"]) == ""  # the image's own: never removed
    assert broken_installs.installed_owner("not json", ["pytest-oldlog"]) == ""
    assert broken_installs.said(stopped_report()) == "AttributeError: module 'py' has no attribute 'builtin'"


@pytest.mark.docker
async def test_a_declared_plugin_that_stops_pytest_before_any_test_is_left_out_and_the_tests_run(
        tmp_path: Path, scripted_llm: Any, make_settings: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    with extra_index(monkeypatch) as index:
        name = unique_name()
        module = name.replace("-", "_")
        # an API the sandbox's pytest does not have, used when pytest loads the plugin (as `py.builtin`)
        index.add_wheel(name, "1.0.0", body="import pytest\nclass Text(pytest.builtin_text_of_old):\n    pass\n",
                        entry_points=f"[pytest11]\noldlog = {module}\n")
        ws = write_project(tmp_path / "ws", {
            "requirements-dev.txt": f"{name}\n",
            "app.py": "def add(a, b):\n    return a - b\n",
            "test_app.py": "from app import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n"})
        scripted_llm.script("no idea")
        events, done = await collect(fix(FixRequest(ws), make_settings(ws, loop={"max_iterations": 1})))
    ready = next(e for e in events if isinstance(e, EnvironmentReady))
    assert ready.problem is None, ready.lines
    assert any(line.startswith(f"{name} left out: pytest stopped in it before any test ran (AttributeError: ")
               and "declares it in requirements-dev.txt" in line for line in ready.lines), ready.lines
    assert name not in ready.packages
    first = next(e for e in events if isinstance(e, TestsRan))
    assert (first.passed, first.failed) == (0, 1), first  # the tests ran: the code's own bug is the rounds'
    assert done.outcome != "environment"


# a made-up library whose import fails on this Python (`asyncio.coroutine`, gone in 3.11), as aiofiles 0.5
OLD_ASYNC = "import asyncio\n\n\n@asyncio.coroutine\ndef read():\n    pass\n"


async def run_on_old_async(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, scripted_llm: Any, make_settings: Any,
                           guarded: bool) -> tuple[str, str, list[Any], Any]:
    """A fix run on a project declaring that library, whose code imports it guarded (only when it is there) or
    not: the distribution's name, its module, the events and the Done."""
    with extra_index(monkeypatch) as index:
        name = unique_name()
        module = index.add_wheel(name, "0.5.0", body=OLD_ASYNC)
        load = (f"try:\n    import {module}\nexcept ImportError:\n    {module} = None\n" if guarded
                else f"import {module}\n")
        ws = write_project(tmp_path / "ws", {
            "requirements-dev.txt": f"{name}\n",
            "app.py": load + "\n\ndef add(a, b):\n    return a - b\n",
            "test_app.py": "from app import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n"})
        scripted_llm.script("no idea")
        events, done = await collect(fix(FixRequest(ws), make_settings(ws, loop={"max_iterations": 1})))
    return name, module, events, done


@pytest.mark.docker
async def test_a_declared_library_that_stops_every_test_modules_import_is_left_out_when_the_code_can_go_without(
        tmp_path: Path, scripted_llm: Any, make_settings: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    name, _, events, done = await run_on_old_async(tmp_path, monkeypatch, scripted_llm, make_settings, guarded=True)
    ready = next(e for e in events if isinstance(e, EnvironmentReady))
    assert ready.problem is None, ready.lines
    assert any(line.startswith(f"{name} left out: pytest stopped in it before any test ran (AttributeError: ")
               for line in ready.lines), ready.lines
    first = next(e for e in events if isinstance(e, TestsRan))
    assert (first.passed, first.failed) == (0, 1), first  # the test ran: the code's own bug is the rounds'
    assert done.outcome != "environment"


@pytest.mark.docker
async def test_a_library_the_code_imports_is_put_back_not_left_out(
        tmp_path: Path, scripted_llm: Any, make_settings: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    name, module, events, _ = await run_on_old_async(tmp_path, monkeypatch, scripted_llm, make_settings, guarded=False)
    ready = next(e for e in events if isinstance(e, EnvironmentReady))
    assert any(line.startswith(f"{name} stops pytest before any test ran") and f"imports `{module}`: kept" in line
               for line in ready.lines), ready.lines
    assert any(p.startswith(name) for p in ready.packages), ready.packages
    assert not any("left out" in line for line in ready.lines)


def test_the_file_that_declares_a_dashed_distribution_is_found_however_its_name_is_written(tmp_path: Path) -> None:
    copy = copy_of(tmp_path, {"requirements-dev.txt": "Jinja2-Time>=0.2\n", "app.py": "x = 1\n"})
    # pip's normal form writes `_` where the file writes `-` (or `.`): the pin belongs where the project named it
    assert dependency_versions.declaring_file(copy, "jinja2_time") == "requirements-dev.txt"
    assert dependency_versions.declaring_file(copy, "jinja2.time") == "requirements-dev.txt"
