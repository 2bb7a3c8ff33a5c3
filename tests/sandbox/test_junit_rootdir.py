"""JUnit ids from the workspace root whatever pytest's rootdir: its header, else a failure's frames, say where it is."""

from __future__ import annotations

from greenloop_sandbox.parsers.common import ParseInput
from greenloop_sandbox.parsers.junit import parse_junit

REPORT = """<?xml version="1.0" encoding="utf-8"?><testsuites><testsuite name="pytest" errors="0" failures="1"
skipped="0" tests="2"><testcase classname="test_cells" name="test_zwj" file="test_cells.py" line="3" time="0.001">
<failure message="assert 3 == 2">def test_zwj():
&gt;       assert width('a') == 2
E       assert 3 == 2

tests/test_cells.py:5: AssertionError</failure></testcase><testcase classname="test_cells.TestPad" name="test_plain"
file="test_cells.py" line="9" time="0.001"/></testsuite></testsuites>"""
HEADER = "platform linux -- Python 3.11.2, pytest-9.2.0\nrootdir: /workspace/tests\nconfigfile: pytest.ini\n"


def test_the_rootdir_header_makes_the_ids_the_workspaces() -> None:
    report = parse_junit(ParseInput(HEADER, REPORT, 1, "/workspace"))
    assert [c.test_id for c in report.cases] == ["tests/test_cells.py::test_zwj", "tests/test_cells.py::TestPad::test_plain"]
    assert (report.failures[0].file, report.failures[0].line) == ("tests/test_cells.py", 5)
    older = "rootdir: /workspace/tests, configfile: pytest.ini\n"  # pytest 7 puts them on one line
    assert parse_junit(ParseInput(older, REPORT, 1, "/workspace")).failures[0].test_id == "tests/test_cells.py::test_zwj"


def test_without_a_header_a_frame_from_the_root_says_where_the_rootdir_is() -> None:
    report = parse_junit(ParseInput("", REPORT, 1, "/workspace"))
    assert report.cases[1].test_id == "tests/test_cells.py::TestPad::test_plain"


def test_a_rootdir_that_is_the_workspace_changes_nothing() -> None:
    at_root = REPORT.replace('file="test_cells.py"', 'file="tests/test_cells.py"').replace(
        'classname="test_cells', 'classname="tests.test_cells')
    report = parse_junit(ParseInput("rootdir: /workspace\n", at_root, 1, "/workspace"))
    assert [c.test_id for c in report.cases] == ["tests/test_cells.py::test_zwj", "tests/test_cells.py::TestPad::test_plain"]
