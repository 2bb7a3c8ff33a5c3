"""The ladder of approaches: what a round that brought nothing better tries next."""

from __future__ import annotations

from pathlib import Path

from greenloop.agent.changes.testfiles import TestFiles
from greenloop.agent.changes.working_copy import WorkingCopy
from greenloop.agent.repair.routes import ladder, repair_messages
from greenloop.retrieval import Location, RepoIndex
from greenloop_sandbox import TestFailure, TestReport

ONE = "import math\n\n\ndef area(r):\n    return math.pi * r\n"
TWO = "def area(r):\n    return 3.14 * r\n\n\ndef perimeter(r):\n    return 2 * 3.14 * r\n\n\ndef unit():\n    return 'cm'\n"
TEST = "from shapes import area\n\n\ndef test_area():\n    assert area(1) == 3.14\n"


def steps(tmp_path: Path, source: str) -> list[tuple[str, str, bool]]:
    copy = WorkingCopy(tmp_path, {"shapes.py": source.encode(), "test_shapes.py": TEST.encode()})
    start = source.splitlines().index("def area(r):") + 1
    top = Location("shapes.py", "area", "function", start, start + 1, 1.0, "frames")
    found = ladder([top], TestReport(failed=1), copy, TestFiles())
    return [(a.route, a.why, a.anew) for a in found]


def test_a_file_that_is_the_function_gets_the_function_written_anew_not_the_same_request_again(tmp_path: Path) -> None:
    assert steps(tmp_path, ONE) == [
        ("function", "the top-ranked function", False),
        ("function", "the top-ranked function, sampled hotter", False),
        ("function", "the top-ranked function, written anew from the tests", True),
        ("blocks", "changes in several places", False),
    ]


def test_a_file_with_more_code_than_the_function_gets_the_whole_file(tmp_path: Path) -> None:
    assert [why for _, why, _ in steps(tmp_path, TWO)][2:] == ["the whole file", "changes in several places"]


async def test_the_anew_request_asks_for_the_function_from_the_tests(tmp_path: Path) -> None:
    copy = WorkingCopy(tmp_path, {"shapes.py": ONE.encode(), "test_shapes.py": TEST.encode()})
    top = Location("shapes.py", "area", "function", 4, 5, 1.0, "frames")
    fresh = ladder([top], TestReport(failed=1), copy, TestFiles())[2]
    index = RepoIndex()
    await index.update(copy.files())
    prompt = repair_messages(fresh, copy, index, TestReport(failed=1), TestFiles(), template="python",
                             workspace=tmp_path)[-1]["content"]
    assert "Write `area` again" in prompt and "Find the bug" not in prompt
    assert "return math.pi * r" in prompt  # the current code is still shown


def test_a_module_that_is_not_installed_is_installed_first_by_its_package_name(tmp_path: Path) -> None:
    copy = WorkingCopy(tmp_path, {"shapes.py": ONE.encode(), "test_shapes.py": TEST.encode()})
    top = Location("shapes.py", "area", "function", 4, 5, 1.0, "frames")

    def first(message: str) -> tuple[str, str]:
        report = TestReport(failed=1, failures=[TestFailure(test_id="test_shapes.py::test_area", message=message)])
        step = ladder([top], report, copy, TestFiles())[0]
        return step.route, step.package

    assert first("ModuleNotFoundError: No module named 'yaml'") == ("install", "pyyaml")  # the language's alias
    assert first("ModuleNotFoundError: No module named 'requests.adapters'") == ("install", "requests")
    assert first("ModuleNotFoundError: No module named 'shapes'")[0] == "function"  # the project's own
