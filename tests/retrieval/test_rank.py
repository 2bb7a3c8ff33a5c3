"""Ranking on real failures: HumanEvalFix packed into one repo, and small Python/Node/Rust projects."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from greenloop.retrieval import Location, RepoIndex, locate, spec_locations
from greenloop_sandbox.report import TestFailure
from tests.retrieval import projects
from tests.retrieval.conftest import HumanEvalFixRepo


def _hit(location: Location, module: str, entry_point: str) -> bool:
    """The location is the buggy function (or a function nested in it)."""
    return location.path == module and location.symbol.split(".")[0] == entry_point


async def test_humanevalfix_raw_pytest_output(hef_repo: HumanEvalFixRepo, hef_index: RepoIndex) -> None:
    sections = hef_repo.sections()
    assert len(sections) == 164  # every buggy task fails its test
    top1 = top3 = 0
    for task, text in sections:
        found = await locate(hef_index, text, top_k=3)
        top1 += bool(found) and _hit(found[0], task.module, task.entry_point)
        top3 += any(_hit(loc, task.module, task.entry_point) for loc in found)
    assert top1 / len(sections) >= 0.95
    assert top3 / len(sections) >= 0.98


async def test_humanevalfix_report_failures(hef_repo: HumanEvalFixRepo, hef_index: RepoIndex) -> None:
    report = hef_repo.report()
    assert report.failed + report.errors == 164
    top1 = 0
    for failure in report.failures:
        task = hef_repo.task_for(failure.file)
        found = await locate(hef_index, [failure], top_k=3)
        top1 += bool(found) and _hit(found[0], task.module, task.entry_point)
        assert {loc.path for loc in found} <= set(hef_index.paths)
    assert top1 / len(report.failures) >= 0.95


async def test_whole_output_ranks_each_failure(hef_repo: HumanEvalFixRepo, hef_index: RepoIndex) -> None:
    found = await locate(hef_index, hef_repo.output, top_k=50)
    assert len(found) == 50
    assert [loc.score for loc in found] == sorted((loc.score for loc in found), reverse=True)
    modules = {t.module for t in hef_repo.tasks}
    assert sum(loc.path in modules for loc in found) >= 45


@pytest.fixture
async def py_index(tmp_path: Path) -> tuple[Path, RepoIndex]:
    files = projects.write(tmp_path, projects.PY_FILES)
    index = RepoIndex()
    await index.update(files)
    return tmp_path, index


async def test_python_exception_deep_in_project_code(py_index: tuple[Path, RepoIndex]) -> None:
    root, index = py_index
    output = projects.pytest_output(root, "tests/test_ops.py::test_divide")
    found = await locate(index, output, top_k=5)
    # divide: the test calls it and is named after it; helper: the exception is raised there
    assert {(loc.symbol, loc.kind) for loc in found[:2]} == {("helper", "function"), ("divide", "function")}
    helper = next(loc for loc in found if loc.symbol == "helper")
    assert helper.why.startswith("deepest project frame") and helper.start_line == 4
    assert helper.signals[0].name == "frame" and helper.signals[0].contribution > 0
    assert all(loc.role == "target" and not loc.symbol.startswith("test_") for loc in found)
    spec = await spec_locations(index, output)
    assert [(loc.symbol, loc.role) for loc in spec] == [("test_divide", "spec")]


async def test_assertion_failure_points_at_the_called_function(py_index: tuple[Path, RepoIndex]) -> None:
    root, index = py_index
    output = projects.pytest_output(root, "tests/test_ops.py::test_average")
    found = await locate(index, output, top_k=5)
    assert found[0].symbol == "average" and "named like the test file" in found[0].why
    assert "test_average" not in [loc.symbol for loc in found]
    assert "test_average" in [loc.symbol for loc in await spec_locations(index, output)]


async def test_no_frames_uses_the_test_name_and_message(py_index: tuple[Path, RepoIndex]) -> None:
    _, index = py_index
    failure = TestFailure(test_id="tests/test_ops.py::test_average", message="assert 2.0 == 3")
    assert (await locate(index, [failure]))[0].symbol == "average"
    orphan = TestFailure(test_id="test_mean_is_right", message="average returned 2.0, expected 3")
    assert (await locate(index, [orphan]))[0].symbol == "average"
    assert await locate(index, "something failed, no idea where") == []


async def test_unknown_runner_output_and_unknown_language(tmp_path: Path) -> None:
    index = RepoIndex()
    files = {"app/server.go": b"package app\n" + b"// line\n" * 60, "app/util.py": b"def util():\n    return 1\n"}
    await index.update(files)
    found = await locate(index, "--- FAIL: TestServe\n    server.go:41: expected 200, got 500\n")
    assert [(loc.path, loc.kind, loc.start_line, loc.end_line) for loc in found] == [
        ("app/server.go", "lines", 33, 49)
    ]


@pytest.mark.skipif(shutil.which("node") is None, reason="node is part of the machine image")
async def test_node_project(tmp_path: Path) -> None:
    files = projects.write(tmp_path, projects.NODE_FILES)
    index = RepoIndex()
    await index.update(files)
    found = await locate(index, projects.node_output(tmp_path), top_k=4)
    assert [loc.symbol for loc in found[:2]] == ["checkSide", "area"]
    assert found[0].path == "lib/shapes.js"


@pytest.mark.skipif(shutil.which("cargo") is None, reason="cargo is part of the machine image")
async def test_rust_project(tmp_path: Path) -> None:
    files = projects.write(tmp_path, projects.RUST_FILES)
    index = RepoIndex()
    await index.update(files)
    found = await locate(index, projects.cargo_output(tmp_path), top_k=6)
    assert (found[0].symbol, found[0].kind, found[0].start_line) == ("Tally.last", "method", 10)
    assert all(not loc.symbol.startswith("tests") for loc in found)
    assert "tests.last_item" in [loc.symbol for loc in await spec_locations(index, projects.cargo_output(tmp_path))]


HUNG = {
    "shapes/__init__.py": "",
    "shapes/steps.py": (
        "def settled(values):\n    return all(v == values[0] for v in values * 200_000)  # slow: the clock stops here\n\n\n"
        "def smooth(values):\n    values = list(values)\n    while not settled(values):\n"
        "        values = [min(values)] + values[1:]  # the bug: the others never move\n    return values\n"
    ),
    "tests/test_steps.py": (  # the function under test is passed to a checker, as HumanEvalFix's tests do
        "from shapes.steps import smooth\n\n\ndef check(f):\n    assert f([3, 1, 2]) == [1, 1, 1]\n\n\n"
        "def test_smooth():\n    check(smooth)\n"
    ),
}


async def test_a_hung_test_points_at_the_loop_not_the_callee_the_clock_stopped_in(tmp_path: Path) -> None:
    files = projects.write(tmp_path, HUNG)
    index = RepoIndex()
    await index.update(files)
    output = projects.pytest_output(tmp_path, "-p", "pytest_timeout", "--timeout=1", "tests/test_steps.py")
    assert "Timeout" in output, output[-2000:]
    found = await locate(index, output, top_k=3)
    assert found[0].symbol == "smooth", [(loc.symbol, loc.why) for loc in found]
    assert found[0].why.startswith("the loop the hung test was in")


MONITOR = {
    "clock/__init__.py": "",
    "clock/monitor.py": (
        "import time\n\nfrom clock.wrappers import retried\n\n\nclass Monitor:\n    _time = None\n\n"
        "    def __init__(self, interval):\n        self.interval = interval\n        self.time = Monitor._time or time\n\n"
        "    @retried\n    def exit(self):\n        return True\n"
    ),
    "clock/wrappers.py": (
        "import functools\n\n\ndef retried(func):\n    @functools.wraps(func)\n    def inner(*args, **kwargs):\n"
        "        for _ in range(3):\n            try:\n                return func(*args, **kwargs)\n"
        "            except OSError:\n                pass\n    return inner\n\n\n"
        "def logged(func):\n    def inner(*args):\n        print(func.__name__)\n        return func(*args)\n"
        "    return inner\n"
    ),
    "tests/__init__.py": "",
    "tests/test_monitor.py": (
        "import functools\n\nfrom clock.monitor import Monitor\n\n\ndef patch_time(func):\n"
        "    @functools.wraps(func)\n    def inner(*args, **kwargs):\n        Monitor._test['time'] = 0\n"
        "        return func(*args, **kwargs)\n    return inner\n\n\n@patch_time\ndef test_monitor_sleeps():\n"
        "    assert Monitor(1).exit()\n"
    ),
}


async def test_a_failing_frame_in_a_tests_closure_names_nothing_in_the_project(tmp_path: Path) -> None:
    # the test fails inside its decorator's `inner`: that says which test failed, but the project's own
    # `inner` wrappers are not named like the test; the class the failure names leads
    projects.write(tmp_path, MONITOR)
    output = projects.pytest_output(tmp_path, "tests/test_monitor.py")
    assert "has no attribute '_test'" in output
    index = RepoIndex()
    await index.update(projects.write(tmp_path, MONITOR))
    found = await locate(index, output, top_k=5)
    assert not any(s.name == "name_like" for loc in found for s in loc.signals)
    assert found[0].path == "clock/monitor.py" and not any(loc.symbol.endswith(".inner") for loc in found[:2])
