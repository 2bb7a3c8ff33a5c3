"""Lock files read for this sandbox, the version sources' order and bad input, and the diagnosis classes (pure)."""

from __future__ import annotations

import json
from pathlib import Path

from packaging.version import Version

from greenloop.agent.changes.working_copy import WorkingCopy
from greenloop.agent.environment import tool_requires
from greenloop.agent.environment.diagnosis import diagnose
from greenloop.agent.environment.locks import read_lock
from greenloop.agent.environment.sources import version_sources
from greenloop.agent.environment.tool_versions import candidates
from greenloop_sandbox.languages import load_language
from greenloop_sandbox.report import TestFailure, TestReport

PYTHON = load_language("python")


def copy_of(tmp_path: Path, files: dict[str, str]) -> WorkingCopy:
    for rel, text in files.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text)
    return WorkingCopy.from_workspace(tmp_path)


def test_a_pipfile_lock_keeps_both_groups_and_drops_what_is_not_for_linux() -> None:
    lock = {"_meta": {"requires": {"python_version": "3.8"}},
            "default": {"requests": {"version": "==2.22.0"}, "pywin32": {"version": "==227",
                                                                        "markers": "sys_platform == 'win32'"}},
            "develop": {"pytest": {"version": "==4.6.9"}, "mylib": {"editable": True, "path": "."}}}
    pins = read_lock("Pipfile.lock", json.dumps(lock), "3.11")
    assert pins.specs == ("pytest==4.6.9", "requests==2.22.0") and not pins.reason


def test_a_pdm_lock_and_a_lock_for_another_python() -> None:
    pdm = ('[[package]]\nname = "attrs"\nversion = "23.1.0"\nrequires_python = ">=3.7"\n\n'
           '[[package]]\nname = "old"\nversion = "1.0"\nrequires_python = "<3.6"\n')
    assert read_lock("pdm.lock", pdm, "3.11").specs == ("attrs==23.1.0",)
    uv = 'version = 1\nrequires-python = "<3.9"\n\n[[package]]\nname = "six"\nversion = "1.16.0"\n' \
         'source = { registry = "https://pypi.org/simple" }\n'
    pins = read_lock("uv.lock", uv, "3.11")
    assert pins.specs == () and pins.reason == "uv.lock is for Python <3.9, not the sandbox's 3.11"
    pipfile = json.dumps({"_meta": {"requires": {"python_version": "2.7"}}, "default": {"six": {"version": "==1.0"}}})
    assert "is for Python 2.7" in read_lock("Pipfile.lock", pipfile, "3.11").reason
    assert "does not parse" in read_lock("Pipfile.lock", "{not json", "3.11").reason


def test_poetry_caret_ranges_are_read() -> None:
    lock = '[[package]]\nname = "a"\nversion = "1"\npython-versions = "^3.6"\n\n' \
           '[[package]]\nname = "b"\nversion = "2"\npython-versions = "~2.7 || ^3.12"\n'
    assert read_lock("poetry.lock", lock, "3.11").specs == ("a==1",)


def test_the_sources_in_order_and_their_bad_input(tmp_path: Path) -> None:
    copy = copy_of(tmp_path, {
        "poetry.lock": "[[package]\n",
        "requirements.txt": "six==1.16.0\nattrs==23.1.0\n",
        "requirements-dev.txt": "six==1.15.0\n",
        "setup.py": "from setuptools import setup\nsetup(install_requires=['six>=1.10'])\n"})
    found = version_sources(copy, "3.11", {"Six": "1.12.0"})
    assert [p.source for p in found] == ["poetry.lock", "requirements-dev.txt, requirements.txt",
                                         "the editor's interpreter", "declared ranges"]
    assert "does not parse" in found[0].reason
    assert found[1].reason == "requirements-dev.txt, requirements.txt pin six twice, to different versions"
    assert found[2].specs == ("six==1.12.0", "attrs==23.1.0")  # pinned where the interpreter has it
    assert found[3].specs and not found[3].reason


def test_requirements_with_ranges_are_no_pinned_source(tmp_path: Path) -> None:
    copy = copy_of(tmp_path, {"requirements.txt": "six>=1\npytest==7.4.4\n"})
    found = version_sources(copy, "3.11")
    assert found[0].reason.endswith("pins no version for six>=1")
    assert found[-1].source == "declared ranges"


def failure(text: str, kind: str = "failure") -> TestReport:
    return TestReport(failed=1, failures=[TestFailure(test_id="t.py::t", file="t.py", line=1, message=text,
                                                      traceback=text, kind=kind)])


def in_ws(path: str) -> bool:
    return not path.startswith("/")


def test_removed_names_are_read_in_their_three_shapes() -> None:
    issue = diagnose(failure("pkg/mod.py:12: in f\n    x = time.clock()\n"
                             "E   AttributeError: module 'time' has no attribute 'clock'"), PYTHON, "3.11", in_ws)
    assert issue is not None and (issue.problem, issue.file, issue.line) == ("removed_api", "pkg/mod.py", 12)
    assert "Python 3.7 or older" in issue.fix
    issue = diagnose(failure("E   AttributeError: 'Thread' object has no attribute 'isAlive'"), PYTHON, "3.11", in_ws)
    assert issue is not None and "threading.Thread.isAlive" in issue.fix
    # not removed yet in this Python: the code's to fix
    assert diagnose(failure("AttributeError: 'Foo' object has no attribute 'assertEquals'"), PYTHON, "3.11",
                    in_ws) is None
    assert diagnose(failure("E   AttributeError: module 'calc' has no attribute 'add'"), PYTHON, "3.11",
                    in_ws) is None


def test_the_test_tool_refusing_is_its_own_class() -> None:
    text = ("conftest.py:2: in pytest_runtest_setup\n    item.get_marker('slow')\n"
            "E   AttributeError: 'Function' object has no attribute 'get_marker'")
    issue = diagnose(failure(text, "error"), PYTHON, "3.11", in_ws)
    assert issue is not None and (issue.problem, issue.file, issue.line) == ("test_tool", "conftest.py", 2)
    assert issue.message == "AttributeError: 'Function' object has no attribute 'get_marker'"
    assert diagnose(failure("assert add(2, 3) == 5"), PYTHON, "3.11", in_ws) is None


def test_the_search_tries_the_newest_then_each_older_major_bounded() -> None:
    versions = [Version(v) for v in ("8.3.5", "8.0.0", "7.4.4", "7.2.1", "6.2.5", "6.0.0", "5.4.3", "4.6.11",
                                     "3.10.1", "2.9.2")]
    assert [str(v) for v in candidates(versions, Version("7.4.4"))] == ["8.3.5", "7.2.1", "6.2.5", "5.4.3", "4.6.11"]
    assert [str(v) for v in candidates(versions, None)] == ["8.3.5", "7.4.4", "6.2.5", "5.4.3", "4.6.11"]


def test_a_pin_outside_the_test_tools_requirements_is_found_and_others_are_not() -> None:
    # the sandbox's `tool_requires.REQUIRES` output for pytest 7.2.1 (importlib.metadata's own spelling)
    output = ('warning on stdout\n["7.2.1", ["attrs (>=19.2.0)", "iniconfig", "pluggy (<2.0,>=0.12)", '
              '"tomli (>=1.0.0) ; python_version < \\"3.11\\"", "colorama ; sys_platform == \\"win32\\"", '
              '"hypothesis (>=3.56) ; extra == \'testing\'"]]\n')
    version, requires = tool_requires.read(output, "3.11")
    assert version == "7.2.1" and sorted(requires) == ["attrs", "iniconfig", "pluggy"]  # markers read for 3.11
    assert sorted(tool_requires.read(output, "3.10")[1]) == ["attrs", "iniconfig", "pluggy", "tomli"]
    assert str(tool_requires.outside("attrs==18.1.0", requires)) == "attrs>=19.2.0"
    assert str(tool_requires.outside("pluggy==0.6.0", requires)) == "pluggy<2.0,>=0.12"
    for spec in ("attrs==19.3.0", "attrs>=17", "iniconfig==0.1", "six==1.0", "not a spec !"):
        assert tool_requires.outside(spec, requires) is None, spec  # within, a range, no range, not the tool's
    assert tool_requires.read("not json\n", "3.11") == ("", {})
