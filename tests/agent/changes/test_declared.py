"""A project's declared requirements: read as pip reads them, installed in one round with the missing module."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from greenloop.agent import FixRequest, fix
from greenloop.agent.changes.declared import declared_packages
from greenloop.agent.changes.testfiles import TestFiles
from greenloop.agent.changes.working_copy import WorkingCopy
from greenloop.agent.events import CandidateAsked, CandidateTested, EnvironmentReady, RoundEnded
from greenloop.agent.orchestration.describe import describe
from greenloop.agent.plan import InstallAction
from greenloop.agent.repair.approach import read_reply
from greenloop.agent.repair.ladder import ladder
from greenloop.retrieval import Location
from greenloop_sandbox import TestFailure, TestReport
from tests.agent.conftest import collect, write_project

REQUIREMENTS = """\
# runtime
tomli_w>=1.0  # writes TOML
Six
-r dev-requirements.txt
-e .
--index-url https://example.invalid/simple
./vendor/thing
pywin32>=300; sys_platform == "win32"
requests[socks]==2.31.0 ; python_version >= "3.8"
not a requirement !!
"""


def test_requirements_files_and_pyproject_groups_are_read_as_pip_reads_them(tmp_path: Path) -> None:
    pyproject = (
        '[project]\nname = "demo"\ndependencies = ["attrs>=22", "six>=1.12"]\n'
        '[project.optional-dependencies]\ntest = ["hypothesis"]\ndocs = ["sphinx"]\n'
        '[dependency-groups]\ndev = ["ruff"]\n'
    )
    copy = WorkingCopy(tmp_path, {
        "requirements.txt": REQUIREMENTS.encode(),
        "test_requirements.txt": b"pytest>=4.4.1\n",
        "requirements/extra.txt": b"toolz\n",
        "docs/requirements.txt": b"mkdocs\n",  # another folder's: not the project's own requirements
        "pyproject.toml": pyproject.encode(),
        "app.py": b"import tomli_w\n",
    })
    assert declared_packages(copy) == [
        "attrs>=22", "six>=1.12", "hypothesis", "ruff",  # pyproject.toml sorts first; `six` once, its first spec
        "tomli_w>=1.0", "requests[socks]==2.31.0", "toolz", "pytest>=4.4.1",
    ]
    assert declared_packages(WorkingCopy(tmp_path, {"app.py": b"x = 1\n"})) == []
    assert declared_packages(WorkingCopy(tmp_path, {"pyproject.toml": b"[project\n"})) == []  # bad TOML: none


SETUP_PY = """\
import sys
from setuptools import setup

requirements = ['future>=0.15.2', 'click>=5.0']
requirements.append('whichcraft')
if sys.platform == 'win32':
    requirements.append('pywin32')  # conditional: not read

setup(
    name='demo',
    install_requires=requirements,
    tests_require=['freezegun'],
    extras_require={'test': ['pytest-mock'], 'docs': ['sphinx']},
)
"""
SETUP_CFG = """\
[options]
install_requires =
    attrs>=19
    importlib-metadata; python_version < "3.8"
[options.extras_require]
testing = hypothesis
"""
TOX_INI = """\
[tox]
envlist = py311
[testenv]
deps =
    {[base]deps}
    -rrequirements.txt
    py27: mock
    pytest-cov
"""


def test_setup_py_setup_cfg_tox_and_pipfile_are_read_without_running_anything(tmp_path: Path) -> None:
    def read(name: str, text: str) -> list[str]:
        return declared_packages(WorkingCopy(tmp_path, {name: text.encode()}))

    assert read("setup.py", SETUP_PY) == ["future>=0.15.2", "click>=5.0", "whichcraft", "freezegun", "pytest-mock"]
    assert read("setup.py", "setup(install_requires=open('r.txt').read().split())\n") == []  # not a literal
    assert read("setup.py", "def broken(:\n") == []
    assert read("setup.cfg", SETUP_CFG) == ["attrs>=19", "hypothesis"]  # the marker is false on this Python
    assert read("tox.ini", TOX_INI) == ["pytest-cov"]  # substitutions, options and factors are no packages
    assert read("Pipfile", '[packages]\nrequests = "*"\n[dev-packages]\npytest-mock = ">=3"\n') == [
        "requests", "pytest-mock>=3"]


def test_a_fixture_a_known_plugin_gives_is_installed_as_that_plugin(tmp_path: Path) -> None:
    copy = WorkingCopy(tmp_path, {"app.py": b"x = 1\n", "test_app.py": b"def test_x(mocker):\n    pass\n"})
    top = Location("app.py", "app", "module", 1, 1, 1.0, "frames")

    def first(message: str) -> tuple[str, str]:
        report = TestReport(errors=1, failures=[TestFailure(test_id="test_app.py::test_x", kind="error",
                                                            message="error", traceback=message)])
        step = ladder([top], report, copy, TestFiles())[0]
        return step.route, getattr(step.form, "package", "")  # the install form carries its package

    assert first("E       fixture 'mocker' not found\n>       available fixtures: cache") == ("install", "pytest-mock")
    assert first("E       fixture 'no_such_thing' not found")[0] != "install"  # no plugin known to give it


def test_the_install_rung_takes_the_declared_packages_with_the_missing_one(tmp_path: Path) -> None:
    copy = WorkingCopy(tmp_path, {"app.py": b"import six\n", "test_app.py": b"import app\n"})
    report = TestReport(errors=1, failures=[TestFailure(
        test_id="test_app.py", kind="error", message="ModuleNotFoundError: No module named 'six'")])
    top = Location("app.py", "app", "module", 1, 1, 1.0, "frames")
    [install, *_] = ladder([top], report, copy, TestFiles(), declared=["Six>=1.12", "tomli_w"])
    assert (install.route, install.form.package, install.form.declared) == ("install", "six", ("tomli_w",))
    assert install.label == "install six and the 1 declared"
    [action] = read_reply(install, copy, "", TestFiles().is_test).actions
    assert isinstance(action, InstallAction) and action.packages == ["six", "tomli_w"]


@pytest.mark.docker
async def test_every_declared_package_is_installed_in_the_first_round(
    tmp_path: Path, scripted_llm: Any, make_settings: Any
) -> None:
    # PySnooper's tests need four packages; one per round, the loop spent every round on installs
    ws = write_project(tmp_path / "ws", {
        "dump.py": "import six\nimport tomli_w\n\n\ndef dump(d):\n    return six.ensure_str(tomli_w.dumps(d))\n",
        "test_dump.py": "from dump import dump\n\n\ndef test_dump():\n    assert dump({'a': 1}) == 'a = 1\\n'\n",
        "requirements.txt": "tomli_w>=1.0\npytest>=7  # the sandbox's own runner: not installed\n",
        "test_requirements.txt": "six\n",
    })
    settings = make_settings(ws, loop={"strategy": "candidates", "max_iterations": 1})
    events, done = await collect(fix(FixRequest(ws), settings))
    # all of them at once, by the environment step before the first round (agent/environment/step.py)
    assert done.outcome == "already_green", "\n".join(describe(e) for e in events)
    [ready] = [e for e in events if isinstance(e, EnvironmentReady)]
    assert sorted(ready.packages) == ["six", "tomli_w>=1.0"] and done.changes.files == []
    assert scripted_llm.requests == []


@pytest.mark.docker
async def test_a_declared_package_that_does_not_install_leaves_the_missing_one_installed_alone(
    tmp_path: Path, scripted_llm: Any, make_settings: Any
) -> None:
    ws = write_project(tmp_path / "ws", {
        "dump.py": "import tomli_w\n\n\ndef dump(d):\n    return tomli_w.dumps(d)\n",
        "test_dump.py": "from dump import dump\n\n\ndef test_dump():\n    assert dump({'a': 1}) == 'a = 1\\n'\n",
        "requirements.txt": "greenloop-no-such-package-on-any-index==0.0.1\n",
    })
    settings = make_settings(ws, loop={"strategy": "candidates", "max_iterations": 1},
                             sandbox={"allow_install": ["tomli-w"]})  # consent: tomli_w is declared nowhere
    events, done = await collect(fix(FixRequest(ws), settings))
    assert done.outcome == "green", "\n".join(describe(e) for e in events)
    asked = [e.target for e in events if isinstance(e, CandidateAsked)]
    assert asked == ["install tomli_w and the 1 declared", "install tomli_w"]
    first = next(e for e in events if isinstance(e, CandidateTested))
    assert first.status == "rejected" and "greenloop-no-such-package-on-any-index" in first.reason
    assert done.changes.packages == ["tomli_w"]


@pytest.mark.docker
async def test_a_second_missing_module_is_installed_in_the_next_round_not_refused_as_the_same_change(
    tmp_path: Path, scripted_llm: Any, make_settings: Any
) -> None:
    # installs change no file: two installs looked like one change, and the second was refused
    ws = write_project(tmp_path / "ws", {
        "dump.py": "import tomli_w\nimport six\n\n\ndef dump(d):\n    return six.ensure_str(tomli_w.dumps(d))\n",
        "test_dump.py": "from dump import dump\n\n\ndef test_dump():\n    assert dump({'a': 1}) == 'a = 1\\n'\n",
    })
    settings = make_settings(ws, loop={"strategy": "candidates", "max_iterations": 2},
                             sandbox={"install_undeclared": "always"})
    events, done = await collect(fix(FixRequest(ws), settings))
    assert done.outcome == "green", "\n".join(describe(e) for e in events)
    assert [e.approach for e in events if isinstance(e, RoundEnded)] == ["install tomli_w", "install six"]
    assert [(i.name, i.origin, i.built) for i in done.changes.installs] == [
        ("tomli-w", "consented", "index"), ("six", "consented", "index")]
    assert done.changes.packages == ["tomli_w", "six"]


@pytest.mark.docker
async def test_a_run_that_installed_something_does_not_say_nothing_was_better(
    tmp_path: Path, scripted_llm: Any, make_settings: Any
) -> None:
    ws = write_project(tmp_path / "ws", {
        "dump.py": "import tomli_w\nimport six\n\n\ndef dump(d):\n    return six.ensure_str(tomli_w.dumps(d))\n",
        "test_dump.py": "from dump import dump\n\n\ndef test_dump():\n    assert dump({'a': 1}) == 'a = 1\\n'\n",
    })
    settings = make_settings(ws, loop={"strategy": "candidates", "max_iterations": 1},
                             sandbox={"install_undeclared": "always"})
    _, done = await collect(fix(FixRequest(ws), settings))
    assert (done.outcome, done.changes.packages) == ("budget", ["tomli_w"])
    assert "No candidate was better" not in done.summary  # the install is its change set (a red run offers none)


@pytest.mark.docker
async def test_a_test_asking_for_the_mocker_fixture_gets_pytest_mock_installed(
    tmp_path: Path, scripted_llm: Any, make_settings: Any
) -> None:
    ws = write_project(tmp_path / "ws", {
        "clock.py": "import time\n\n\ndef now():\n    return time.time()\n",
        "test_clock.py": "import clock\n\n\ndef test_now(mocker):\n"
                         "    mocker.patch('time.time', return_value=5.0)\n    assert clock.now() == 5.0\n",
    })
    settings = make_settings(ws, loop={"strategy": "candidates", "max_iterations": 1})
    events, done = await collect(fix(FixRequest(ws), settings))
    assert done.outcome == "green", "\n".join(describe(e) for e in events)
    assert done.changes.packages == ["pytest-mock"] and scripted_llm.requests == []
    assert [(i.name, i.origin) for i in done.changes.installs if i.origin != "dependency"] == [("pytest-mock", "mapped")]
