"""A dependency's API that the installed release no longer has: the diagnosis (pure, and the sandbox's probe run
here on this interpreter's own packages), the older releases tried, and the whole step end to end (real Docker
engine, a package index on 127.0.0.1 serving two majors of a made-up distribution, real HTTP to the scripted model)."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from packaging.specifiers import SpecifierSet
from packaging.version import Version

from greenloop.agent import FixRequest, fix
from greenloop.agent.environment.dependency_versions import (
    PROBE,
    allowed_range,
    declaring_file,
    is_workspace_module,
    read_probe,
)
from greenloop.agent.environment.diagnosis import dependency_api_issue, dependency_suspects, diagnose
from greenloop.agent.environment.tool_versions import candidates
from greenloop.agent.events import EnvironmentReady, TestsRan
from greenloop.cli import main
from greenloop_sandbox.languages import load_language
from greenloop_sandbox.pip_index import wheel_versions
from greenloop_sandbox.report import TestFailure
from tests.agent.conftest import collect, tree_bytes, write_project
from tests.agent.environment.test_locks_and_diagnosis import copy_of, failure, in_ws
from tests.support.package_index import PackageIndex, extra_index, unique_name

IMPORT = ("app.py:1: in <module>\n    from werkzeug.urls import url_quote\n"
          "E   ImportError: cannot import name 'url_quote' from 'werkzeug.urls' "
          "(/usr/local/lib/python3.11/dist-packages/werkzeug/urls.py)")
ATTR = ("pkg/views.py:7: in render\n    return markdown.util.etree.Element('p')\n"
        "E   AttributeError: module 'markdown.util' has no attribute 'etree'")


def test_both_shapes_and_a_submodule_are_suspects_and_the_stdlib_is_not() -> None:
    assert dependency_suspects(IMPORT) == [("werkzeug.urls", "url_quote")]
    assert dependency_suspects(ATTR) == [("markdown.util", "etree")]
    assert dependency_suspects("AttributeError: module 'yaml' has no attribute 'FullLoader'") == [("yaml", "FullLoader")]
    # the standard library is the removed-api class's (or the code's), never a dependency's
    assert dependency_suspects("ImportError: cannot import name 'Mapping' from 'collections' (/usr/lib/x.py)") == []
    assert dependency_suspects("AttributeError: module 'os.path' has no attribute 'walk'") == []
    assert dependency_suspects("assert add(2, 3) == 5") == []


def test_the_pure_diagnosis_leaves_a_dependency_suspect_to_the_sandbox() -> None:
    assert diagnose(failure(IMPORT, "error"), load_language("python"), "3.11", in_ws) is None


def test_a_workspace_module_is_the_missing_name_rungs_not_this_class() -> None:
    paths = ["app.py", "src/werkzeug/__init__.py", "errors.py", "tests/test_app.py",
             ".venv/lib/python3.11/site-packages/flask/__init__.py"]
    assert is_workspace_module("werkzeug.urls", paths)  # under an import root
    assert is_workspace_module("errors", paths)
    assert not is_workspace_module("flask", paths)  # a virtual environment kept in the workspace is not the project
    assert not is_workspace_module("markdown.util", paths)


def probe(module: str, name: str, cwd: Path = Path("/")) -> str:
    """The sandbox's probe, run on this interpreter and its own installed packages (an empty module at most)."""
    done = subprocess.run([sys.executable, "-c", PROBE, module, name], capture_output=True, text=True, timeout=60,
                          check=False, cwd=cwd)
    return done.stdout + done.stderr


def test_the_probe_names_the_distribution_only_when_the_name_really_is_missing(tmp_path: Path) -> None:
    from importlib.metadata import version

    # a folder of the same name where the probe runs (the workspace) is taken off the path: the installed one is asked
    (tmp_path / "packaging").mkdir()
    (tmp_path / "packaging" / "__init__.py").write_text("")
    (tmp_path / "packaging" / "version.py").write_text("LegacyVersion = None\n")
    assert read_probe(probe("packaging.version", "LegacyVersion", tmp_path)) == ("packaging", version("packaging"))

    # packaging 22 removed LegacyVersion; this interpreter's packaging is newer
    assert read_probe(probe("packaging.version", "LegacyVersion")) == ("packaging", version("packaging"))
    assert read_probe(probe("packaging.version", "Version")) is None  # the name exists: the code's to fix
    assert read_probe(probe("packaging", "version")) is None  # a submodule not imported yet still exists
    assert read_probe(probe("json", "nothing_here")) is None  # no distribution: the standard library
    assert read_probe(probe("no_such_module_here", "x")) is None
    assert read_probe('{"dists": ["w"], "version": "1", "has": false, "file": "/workspace/w.py"}') is None
    assert read_probe("Traceback ...\nSyntaxError") is None and read_probe(None) is None


def test_the_issue_names_place_words_distribution_version_and_the_users_fix() -> None:
    broken = TestFailure(test_id="test_app.py", file="test_app.py", line=1, message=IMPORT, traceback=IMPORT,
                         kind="error")
    issue = dependency_api_issue(broken, in_ws, "werkzeug.urls.url_quote", "Werkzeug", "3.0.1", "requirements.txt")
    assert (issue.problem, issue.file, issue.line) == ("dependency_api", "app.py", 1)
    assert issue.message.startswith("ImportError: cannot import name 'url_quote' from 'werkzeug.urls'")
    assert issue.fix.startswith("`werkzeug.urls.url_quote` is not in Werkzeug 3.0.1 (installed); the project was "
                                "written for an older Werkzeug: pin `Werkzeug<3` in requirements.txt")
    zero = dependency_api_issue(broken, in_ws, "m.x", "m", "0.9.2", "pyproject.toml")
    assert "pin `m<0.9` in pyproject.toml" in zero.fix
    tried = dependency_api_issue(broken, in_ws, "m.x", "m", "3.1.0", "setup.py", ("2.4.0", "1.9.0"))
    assert "not in m 3.1.0 (installed) nor in 2.4.0, 1.9.0" in tried.fix and "pin `m<1` in setup.py" in tried.fix


def test_the_older_releases_tried_are_bounded_ordered_and_within_the_projects_range() -> None:
    versions = [Version(v) for v in ("3.1.3", "3.0.6", "3.0.1", "2.3.8", "2.2.3", "1.0.1", "0.16.1", "0.15.6")]
    installed = Version("3.0.1")
    assert [str(v) for v in candidates(versions, installed, below=installed, limit=3)] == ["2.3.8", "1.0.1", "0.16.1"]
    assert [str(v) for v in candidates(versions, installed, below=installed, limit=3,
                                       allowed=SpecifierSet(">=1"))] == ["2.3.8", "1.0.1"]
    assert candidates(versions, installed, below=installed, allowed=SpecifierSet("==3.0.1")) == []
    # one major left: the newest of each older minor instead
    minors = [Version(v) for v in ("1.4.2", "1.4.0", "1.3.9", "1.3.1", "1.2.0", "1.1.5", "1.0.0")]
    assert [str(v) for v in candidates(minors, Version("1.4.2"), below=Version("1.4.2"), limit=3)] == \
        ["1.4.0", "1.3.9", "1.2.0"]


def test_the_projects_range_for_a_distribution_is_its_specs_together(tmp_path: Path) -> None:
    assert allowed_range("Werkzeug", ["werkzeug>=2", "flask==2.0.1", "Werkzeug<3.1", "not a spec !"]) == \
        SpecifierSet(">=2,<3.1")
    assert allowed_range("werkzeug", ["flask"]) == SpecifierSet()
    copy = copy_of(tmp_path, {"requirements-dev.txt": "pytest\n", "setup.py": "setup(install_requires=['Werkzeug'])\n"})
    assert declaring_file(copy, "werkzeug") == "setup.py"
    assert declaring_file(copy, "flask") == "requirements.txt"


# end to end: a made-up distribution whose 1.x has `old_api` and whose 2.x and 3.x do not


@pytest.fixture
def moved_on(monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[PackageIndex, str, str]]:
    with extra_index(monkeypatch) as index:
        name = unique_name()
        module = ""
        for version, body in (("1.4.0", "def old_api(s):\n    return s.upper()\n"), ("1.3.0", "def old_api(s):\n"
                              "    return s\n"), ("2.0.0", ""), ("3.1.0", "")):
            module = index.add_wheel(name, version, body=body)
        yield index, name, module


async def test_the_index_lists_each_made_up_release(moved_on: tuple[PackageIndex, str, str]) -> None:
    index, name, _ = moved_on
    assert [str(v) for v in await wheel_versions(name, "3.11", [index.url])] == ["3.1.0", "2.0.0", "1.4.0", "1.3.0"]


def project(tmp_path: Path, name: str, module: str, requirement: str) -> Path:
    return write_project(tmp_path / "ws", {
        "requirements.txt": f"{requirement}\n",
        "shout.py": f"from {module} import old_api\n\n\ndef shout(s):\n    return old_api(s) + '?'\n",
        "test_shout.py": "from shout import shout\n\n\ndef test_shout():\n    assert shout('hi') == 'HI!'\n"})


@pytest.mark.docker
async def test_a_dependency_that_moved_on_gets_its_newest_older_release_that_has_the_name(
        tmp_path: Path, scripted_llm: Any, make_settings: Any, moved_on: tuple[PackageIndex, str, str]) -> None:
    _, name, module = moved_on
    ws = project(tmp_path, name, module, name)  # declared without a range: the newest (3.1.0) is installed
    scripted_llm.script("no idea")
    events, done = await collect(fix(FixRequest(ws), make_settings(ws, loop={"max_iterations": 1})))
    ready = next(e for e in events if isinstance(e, EnvironmentReady))
    assert ready.problem is None, ready.lines
    assert any(f"{name} 3.1.0 has no `{module}.old_api`" in line for line in ready.lines), ready.lines
    assert any(line.startswith(f"{name} 2.0.0: still lacks") for line in ready.lines), ready.lines
    assert any(line.startswith(f"{name} 1.4.0 kept") and f"pin `{name}==1.4.0` in requirements.txt" in line
               for line in ready.lines), ready.lines
    first = next(e for e in events if isinstance(e, TestsRan))
    assert (first.passed, first.failed) == (0, 1)  # the tests ran: the code's own bug ('?' for '!') is the rounds'
    assert done.outcome != "environment"


@pytest.mark.docker
async def test_a_conftest_that_imports_a_moved_api_gets_the_older_release_not_the_package_left_out(
        tmp_path: Path, scripted_llm: Any, make_settings: Any, moved_on: tuple[PackageIndex, str, str]) -> None:
    _, name, module = moved_on
    ws = project(tmp_path, name, module, name)
    # imported by the conftest, the ImportError stops pytest before any test, its message naming the installed
    # module's path: that module is what the project's code wants an older release of, not a frame it stopped in
    (ws / "conftest.py").write_text("import shout  # noqa: F401\n")
    scripted_llm.script("no idea")
    events, done = await collect(fix(FixRequest(ws), make_settings(ws, loop={"max_iterations": 1})))
    ready = next(e for e in events if isinstance(e, EnvironmentReady))
    assert ready.problem is None, ready.lines
    assert not any("left out" in line for line in ready.lines), ready.lines
    assert any(line.startswith(f"{name} 1.4.0 kept") for line in ready.lines), ready.lines
    first = next(e for e in events if isinstance(e, TestsRan))
    assert (first.passed, first.failed) == (0, 1)
    assert done.outcome != "environment"


@pytest.mark.docker
def test_when_the_projects_range_allows_no_release_with_the_name_the_run_stops_with_exit_3(
        tmp_path: Path, scripted_llm: Any, capsys: pytest.CaptureFixture[str],
        moved_on: tuple[PackageIndex, str, str]) -> None:
    _, name, module = moved_on
    ws = project(tmp_path, name, module, f"{name}>=2")  # 1.x is outside the project's own range: never tried
    before = tree_bytes(ws)
    code = main(["fix", str(ws), "--base-url", scripted_llm.base_url, "--sandbox", "docker"])
    out = capsys.readouterr()
    text = " ".join((out.out + out.err).split())  # the terminal wraps long lines
    assert code == 3, text
    assert "dependency api at shout.py:1" in text and f"cannot import name 'old_api' from '{module}'" in text
    assert f"`{module}.old_api` is not in {name} 3.1.0 (installed) nor in 2.0.0" in text
    assert f"pin `{name}<2` in requirements.txt" in text and f"outside the project's own range ({name}>=2)" in text
    assert "1.4.0" not in text and "1.3.0" not in text
    after = {path: data for path, data in tree_bytes(ws).items() if not path.startswith(".greenloop/")}  # the run log
    assert scripted_llm.requests == [] and after == before


@pytest.mark.docker
@pytest.mark.parametrize("first", ["the test tool", "the dependency"])
async def test_remedies_chain_an_older_dependency_and_a_pytest_that_takes_the_test_id(
        tmp_path: Path, scripted_llm: Any, make_settings: Any, moved_on: tuple[PackageIndex, str, str],
        first: str) -> None:
    # two problems, each hidden until the other is remedied: the sandbox's pytest 7.2 answers "not found" for a
    # test inside an `__init__.py`, and the newest release of the dependency lacks the name the code imports.
    # Which the first run shows depends on where the import is: in the test module, the tool's refusal comes
    # first; in a conftest, the ImportError does (then the older release's run stops on the refusal)
    _, name, module = moved_on
    ws = project(tmp_path, name, module, name)
    if first == "the dependency":
        (ws / "conftest.py").write_text("import shout  # noqa: F401\n")
    (ws / "test_shout.py").unlink()
    (ws / "tests").mkdir()
    (ws / "tests" / "__init__.py").write_text("from shout import shout\n\n\nclass TestShout:\n"
                                              "    def test_shout(self):\n        assert shout('hi') == 'HI!'\n")
    scripted_llm.script("no idea")
    request = FixRequest(ws, test_ids=["tests/__init__.py::TestShout::test_shout"])
    events, done = await collect(fix(request, make_settings(ws, loop={"max_iterations": 1})))
    ready = next(e for e in events if isinstance(e, EnvironmentReady))
    assert ready.problem is None, ready.lines
    assert ready.test_tool.endswith("(the newest that runs the tests)"), ready.lines
    handed_on = "lacking `old_api`" if first == "the test tool" else "the test tool refusing the tests"
    assert any("the run then stops on" in line and handed_on in line and "(remedied next)" in line
               for line in ready.lines), ready.lines
    assert any(line.startswith(f"{name} 1.4.0 kept") for line in ready.lines), ready.lines
    first = next(e for e in events if isinstance(e, TestsRan))
    assert (first.passed, first.failed) == (0, 1), first  # the test ran: the code's own bug is the rounds'
    assert done.outcome != "environment"
