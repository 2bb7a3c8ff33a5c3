"""The test tool refusing an option the project's own configuration passes (`addopts = --cov=...` without
pytest-cov): read from the run, the plugin installed when the project declares it, else a stop naming it. The
end-to-end tests run on a real Docker engine, real pytest-cov from the package index, real HTTP to the
scripted model."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from greenloop.agent import FixRequest, fix
from greenloop.agent.environment import test_config
from greenloop.agent.events import EnvironmentReady, TestsRan
from greenloop.cli import main
from greenloop_sandbox.languages import load_language
from greenloop_sandbox.report import TestFailure, TestReport
from tests.agent.conftest import collect, tree_bytes, write_project
from tests.agent.environment.test_locks_and_diagnosis import copy_of

USAGE = ("ERROR: usage: run_pytest.py [options] [file_or_dir] [file_or_dir] [...]\n"
         "run_pytest.py: error: unrecognized arguments: --cov=luigi --cov-report=xml\n"
         "  inifile: /workspace/tox.ini\n  rootdir: /workspace\n")
TOX = "[tox]\nenvlist = py3\n\n[pytest]\naddopts = --cov=app -vv --strict-markers\n"
APP = {"app.py": "def add(a, b):\n    return a - b\n",
       "test_app.py": "from app import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n"}


def usage_report(text: str = USAGE) -> TestReport:
    return TestReport(errors=1, exit_code=4, raw=text, failures=[TestFailure(
        test_id="<run>", message=f"the test run wrote no JUnit report (exit code 4): {text.splitlines()[0]}",
        traceback=text, kind="error")])


def test_the_refused_options_their_file_line_and_plugins_are_read(tmp_path: Path) -> None:
    python = load_language("python")
    copy = copy_of(tmp_path, {"tox.ini": "[tox]\nenvlist = py3\n\n[pytest]\naddopts = --cov=luigi --cov-report=xml\n"})
    refusal = test_config.read(usage_report(), python, copy)
    assert refusal is not None
    assert refusal.options == ("--cov=luigi", "--cov-report=xml")
    assert (refusal.file, refusal.line) == ("tox.ini", 5)
    assert "unrecognized arguments: --cov=luigi --cov-report=xml" in refusal.message
    assert test_config.plugins(refusal.options, python) == {"--cov=luigi": "pytest-cov", "--cov-report=xml": "pytest-cov"}
    assert test_config.plugins(("-n", "4", "--made-up-flag"), python) == {"-n": "pytest-xdist"}
    # pytest 8's wording, and a run in which tests ran is no refusal
    assert test_config.read(usage_report(USAGE.replace("inifile", "configfile")), python, copy) is not None
    ran = usage_report().model_copy(update={"cases": [{"test_id": "t", "outcome": "failed"}]})
    assert test_config.read(ran, python, copy) is None
    assert test_config.read(usage_report("E   AssertionError"), python, copy) is None


def test_a_plugin_is_declared_where_the_project_names_it_as_a_requirement(tmp_path: Path) -> None:
    copy = copy_of(tmp_path, {"tox.ini": "[testenv]\ndeps =\n    pytest<7.0\n    pytest-cov>=2.0,<3.0\n",
                              "pyproject.toml": '[dependency-groups]\ncommon = ["pytest-xdist[psutil]>=2"]\n',
                              "README.md": "run with pytest-mock\n"})
    assert test_config.declaring_file(copy, "pytest-cov") == "tox.ini"
    assert test_config.spec_in(copy, "tox.ini", "pytest-cov") == "pytest-cov<3.0,>=2.0"
    assert test_config.declaring_file(copy, "pytest-xdist") == "pyproject.toml"
    assert test_config.spec_in(copy, "pyproject.toml", "pytest-xdist") == "pytest-xdist[psutil]>=2"
    assert test_config.declaring_file(copy, "pytest-mock") == ""  # a README is no requirement
    assert test_config.declaring_file(copy, "pytest") == "tox.ini"
    assert test_config.declaring_file(copy_of(tmp_path / "b", {"tox.ini": "deps = pytest-covx\n"}), "pytest-cov") == ""


@pytest.mark.docker
async def test_a_declared_plugin_whose_option_the_configuration_passes_is_installed_and_the_tests_run(
        tmp_path: Path, scripted_llm: Any, make_settings: Any) -> None:
    # the pinned requirements are the source installed; tox.ini names pytest-cov for its own environments
    ws = write_project(tmp_path / "ws", {"requirements.txt": "six==1.16.0\n",
                                         "tox.ini": TOX + "\n[testenv]\ndeps =\n    pytest-cov>=4\n", **APP})
    scripted_llm.script("no idea")
    events, done = await collect(fix(FixRequest(ws), make_settings(ws, loop={"max_iterations": 1})))
    ready = next(e for e in events if isinstance(e, EnvironmentReady))
    assert ready.problem is None, ready.lines
    assert any("refuses the options --cov=app" in line for line in ready.lines), ready.lines
    assert any(line.startswith("pytest-cov>=4 installed: the project declares it (tox.ini)") for line in ready.lines)
    first = next(e for e in events if isinstance(e, TestsRan))
    assert (first.passed, first.failed) == (0, 1)  # the tests ran: the code's own bug is the rounds'
    assert done.outcome != "environment"


@pytest.mark.docker
def test_an_undeclared_plugins_option_stops_the_run_naming_the_plugin_to_declare(
        tmp_path: Path, scripted_llm: Any, capsys: pytest.CaptureFixture[str]) -> None:
    ws = write_project(tmp_path / "ws", {"tox.ini": TOX, **APP})
    before = tree_bytes(ws)
    code = main(["fix", str(ws), "--base-url", scripted_llm.base_url, "--sandbox", "docker"])
    text = " ".join((lambda o: o.out + o.err)(capsys.readouterr()).split())
    assert code == 3, text
    assert "test config at tox.ini:5" in text and "unrecognized arguments: --cov=app" in text
    assert "options of pytest-cov, which the project does not declare: add pytest-cov to its test requirements" in text
    after = {path: data for path, data in tree_bytes(ws).items() if not path.startswith(".greenloop/")}
    assert scripted_llm.requests == [] and after == before
