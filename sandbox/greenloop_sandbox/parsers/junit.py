"""pytest's JUnit XML (junit_family=xunit1, which keeps file and line) -> TestReport.

pytest writes a test's `file` and `classname` relative to its rootdir, which is not the workspace
when an ini file sits below it (`tests/pytest.ini`) or `--rootdir` says so. The ids this parser
gives are the ones pytest accepts from the workspace root: the rootdir is read from pytest's own
header (`rootdir: /workspace/tests`), else from a traceback frame that names the file from the root.
"""

from __future__ import annotations

import posixpath
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
    below = rootdir_below(data.output, data.root) or _from_frames(root)
    for case in root.iter("testcase"):
        _add_case(report, case, data.root, below)
    report.duration = sum(c.duration for c in report.cases)
    if report.total == 0 and data.exit_code not in (0, 5):
        return no_report(data, f"pytest failed before running tests (exit code {data.exit_code})")
    return report


_ROOTDIR = re.compile(r"^rootdir: (?P<path>[^,\n]+?)\s*(?:,|$)", re.MULTILINE)


def rootdir_below(output: str, root: str) -> str:
    """pytest's rootdir relative to the workspace root, from its header ("" when it is the root or not said)."""
    match = _ROOTDIR.search(output)
    if match is None:
        return ""
    rel = relpath(match["path"].strip(), root)
    return "" if rel.startswith("/") or rel in ("", ".") else rel.strip("/")


def _from_frames(root: ET.Element) -> str:
    """The rootdir below the workspace when the header is missing: a failure's frame `tests/test_a.py:4` for
    a case whose `file` is `test_a.py` (pytest's tracebacks name files from where it was started)."""
    for case in root.iter("testcase"):
        file = case.get("file") or ""
        node = case.find("failure") if case.find("failure") is not None else case.find("error")
        if not file or file.startswith("/") or node is None:
            continue
        for match in _FRAME.finditer(node.text or ""):
            path = match["path"]
            if path == file:
                return ""
            if path.endswith("/" + file) and not path.startswith(("/", "..")):
                return path[: -len(file) - 1]
    return ""


def _test_id(case: ET.Element, root: str, below: str = "") -> tuple[str, str | None]:
    name = case.get("name", "?")
    classname = case.get("classname", "")
    file = case.get("file")
    if file:
        file = relpath(file, root)
        module = file.removesuffix(".py").replace("/", ".")
        rest = classname[len(module):].lstrip(".") if classname.startswith(module) else ""
        if below and not file.startswith("/"):
            file = posixpath.normpath(f"{below}/{file}")
        return "::".join(p for p in (file, *rest.split("."), name) if p), file
    return (f"{classname}::{name}" if classname else name), None


def _add_case(report: TestReport, case: ET.Element, root: str, below: str = "") -> None:
    test_id, file = _test_id(case, root, below)
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
