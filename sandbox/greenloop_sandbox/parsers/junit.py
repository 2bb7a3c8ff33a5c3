"""pytest's JUnit XML (junit_family=xunit1, which keeps file and line) -> TestReport."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

from greenloop_sandbox.parsers.assertion import split_equality
from greenloop_sandbox.parsers.common import ParseInput, no_report, relpath
from greenloop_sandbox.report import TestCase, TestFailure, TestReport

_COUNTERS = {"passed": "passed", "failed": "failed", "error": "errors", "skipped": "skipped"}
_FRAME = re.compile(r"^(?P<path>[^\s:][^:\n]*?):(?P<line>\d+): ", re.MULTILINE)


def parse_junit(data: ParseInput) -> TestReport:
    if not data.report or not data.report.strip():
        return no_report(data, f"the test run wrote no JUnit report (exit code {data.exit_code})")
    try:
        root = ET.fromstring(data.report)
    except ET.ParseError as exc:
        return no_report(data, f"unreadable JUnit report: {exc}")
    report = TestReport(exit_code=data.exit_code)
    for case in root.iter("testcase"):
        _add_case(report, case, data.root)
    report.duration = sum(c.duration for c in report.cases)
    if report.total == 0 and data.exit_code not in (0, 5):
        return no_report(data, f"pytest failed before running tests (exit code {data.exit_code})")
    return report


def _test_id(case: ET.Element, root: str) -> tuple[str, str | None]:
    name = case.get("name", "?")
    classname = case.get("classname", "")
    file = case.get("file")
    if file:
        file = relpath(file, root)
        module = file.removesuffix(".py").replace("/", ".")
        rest = classname[len(module):].lstrip(".") if classname.startswith(module) else ""
        return "::".join(p for p in (file, *rest.split("."), name) if p), file
    return (f"{classname}::{name}" if classname else name), None


def _add_case(report: TestReport, case: ET.Element, root: str) -> None:
    test_id, file = _test_id(case, root)
    duration = float(case.get("time") or 0.0)
    outcome = "passed"
    for tag, kind in (("failure", "failure"), ("error", "error")):
        node = case.find(tag)
        if node is None:
            continue
        outcome = "failed" if kind == "failure" else "error"
        text = node.text or ""
        line = _line_in(text, file)
        if line is None and case.get("line", "").isdigit():
            line = int(case.get("line", "0")) + 1
        message = (node.get("message") or "").strip()[:2000]
        sides = split_equality(message) if kind == "failure" else None
        report.failures.append(TestFailure(
            test_id=test_id, file=file, line=line, kind=kind, message=message, traceback=text,
            expected=sides[0] if sides else None, actual=sides[1] if sides else None,
        ))
        break
    if outcome == "passed" and case.find("skipped") is not None:
        outcome = "skipped"
    counter = _COUNTERS[outcome]
    setattr(report, counter, getattr(report, counter) + 1)
    report.cases.append(TestCase(test_id=test_id, outcome=outcome, duration=duration))


def _line_in(text: str, file: str | None) -> int | None:
    """The line in the test file where the failure happened (its frame in the traceback)."""
    frames = [(m["path"], int(m["line"])) for m in _FRAME.finditer(text)]
    for path, line in frames:
        if file is not None and path == file:
            return line
    return frames[-1][1] if frames and file is None else None
