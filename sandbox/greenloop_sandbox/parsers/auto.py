"""Any test command's outcome -> TestReport: the machine-readable report it produced, else its exit code.

A project's own `test_command` (`make check`, `tox -e py`) may write a JUnit XML file (read when the
project names it), or print TAP or libtest output, which are recognised in the output. Anything else is
one pseudo-test, the command itself: passed on exit code 0, else failed with the output's tail and its
first `file:line` as the failure's frames (retrieval reads the frames from the traceback text).
"""

from __future__ import annotations

import re

from greenloop_sandbox.parsers.common import ParseInput, first_location, relpath
from greenloop_sandbox.parsers.junit import parse_junit
from greenloop_sandbox.parsers.libtest import parse_libtest
from greenloop_sandbox.parsers.tap import parse_tap
from greenloop_sandbox.report import TestCase, TestFailure, TestReport

COMMAND_ID = "<test command>"  # the pseudo-test of a command without a machine-readable report
_TAIL_LINES = 200
_TAP = re.compile(r"^(TAP version \d+|1\.\.\d+)\s*$", re.M)
_TAP_RESULT = re.compile(r"^ *(ok|not ok) \d+\b", re.M)
_LIBTEST = re.compile(r"^(running \d+ tests?|test result: (ok|FAILED)\.)", re.M)
_PY_FRAME = re.compile(r'File "(?P<path>[^"]+)", line (?P<line>\d+)')


def parse_auto(data: ParseInput) -> TestReport:
    """The report file (JUnit XML or TAP), else TAP or libtest in the output, else the exit code."""
    report = _machine_report(data)
    if report is None:
        return exit_code_report(data)
    if data.exit_code != 0 and not report.failures:
        # the tests passed but the command did not (a lint step after them): never green
        report.failures.append(_command_failure(data, "though its report shows no failing test"))
        report.errors += 1
    return report


def _machine_report(data: ParseInput) -> TestReport | None:
    text = (data.report or "").strip()
    if text.startswith("<"):
        return _named(parse_junit(data), "junit")
    if text and _TAP.search(text) and _TAP_RESULT.search(text):
        return _named(parse_tap(data), "tap")
    if _TAP.search(data.output) and _TAP_RESULT.search(data.output):
        return _named(parse_tap(ParseInput(data.output, None, data.exit_code, data.root)), "tap")
    if _LIBTEST.search(data.output):
        return _named(parse_libtest(data), "libtest")
    return None


def exit_code_report(data: ParseInput) -> TestReport:
    """One pseudo-test: passed on exit code 0, else a failure carrying the output's tail and frames."""
    if data.exit_code == 0:
        return _named(TestReport(passed=1, exit_code=0, cases=[TestCase(test_id=COMMAND_ID, outcome="passed")]),
                      "exit-code")
    report = TestReport(failed=1, exit_code=data.exit_code,
                        failures=[_command_failure(data, "")],
                        cases=[TestCase(test_id=COMMAND_ID, outcome="failed")])
    return _named(report, "exit-code")


def _command_failure(data: ParseInput, why: str) -> TestFailure:
    tail = "\n".join(data.output.strip().splitlines()[-_TAIL_LINES:])
    path, line = _first_frame(tail, data.root)
    message = f"the test command exited with code {data.exit_code}" + (f" {why}" if why else "")
    return TestFailure(test_id=COMMAND_ID, file=path, line=line, message=message, traceback=tail,
                       kind="failure" if not why else "error")


def _first_frame(text: str, root: str) -> tuple[str | None, int | None]:
    """The first Python frame (`File "x", line N`) inside the workspace, else the first `file:line`."""
    for m in _PY_FRAME.finditer(text):
        path = relpath(m["path"], root)
        if not path.startswith("/") and not path.startswith("<"):
            return path, int(m["line"])
    return first_location(text, root)


def _named(report: TestReport, parser: str) -> TestReport:
    report.parser = parser
    return report


__all__ = ["COMMAND_ID", "exit_code_report", "parse_auto"]
