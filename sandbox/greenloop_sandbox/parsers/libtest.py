"""cargo test's libtest output (old and new panic formats, compile errors) -> TestReport."""

from __future__ import annotations

import re

from greenloop_sandbox.parsers.common import ParseInput, no_report
from greenloop_sandbox.report import TestCase, TestFailure, TestReport

_RESULT = re.compile(r"^test (?P<name>.+?) \.\.\. (?P<res>ok|FAILED|ignored)\b")
_SECTION = re.compile(r"^---- (?P<name>.+?) std(?:out|err) ----$")
_PANIC_NEW = re.compile(r"panicked at (?P<path>[^\s:]+):(?P<line>\d+):\d+:\s*$")
_PANIC_OLD = re.compile(r"panicked at '(?P<msg>.*)', (?P<path>[^\s:]+):(?P<line>\d+):\d+", re.DOTALL)
_COMPILE_ERR = re.compile(r"^error(?:\[E\d+\])?: (?P<msg>.+)$")
_ARROW = re.compile(r"^\s*--> (?P<path>[^\s:]+):(?P<line>\d+):\d+")
_SUMMARY = re.compile(r"^test result: ")
# libtest's only word on a hung test (it cannot end one): printed once a test passes 60 s
_RUNNING = re.compile(r"^test (?P<name>.+?) has been running for over (?P<secs>\d+) seconds$")


def parse_libtest(data: ParseInput) -> TestReport:
    lines = data.output.splitlines()
    report = TestReport(exit_code=data.exit_code)
    outcomes: dict[str, str] = {}
    for line in lines:
        m = _RESULT.match(line)
        if m:
            outcomes[m["name"]] = {"ok": "passed", "FAILED": "failed", "ignored": "skipped"}[m["res"]]
    sections = _sections(lines)
    for name, outcome in outcomes.items():
        report.cases.append(TestCase(test_id=name, outcome=outcome))
        if outcome == "failed":
            report.failures.append(_failure(name, sections.get(name, "")))
    report.passed = sum(1 for o in outcomes.values() if o == "passed")
    report.failed = sum(1 for o in outcomes.values() if o == "failed")
    report.skipped = sum(1 for o in outcomes.values() if o == "skipped")
    hung = [_hung(m["name"], m["secs"]) for x in lines if (m := _RUNNING.match(x)) and m["name"] not in outcomes]
    for failure in hung:
        report.cases.append(TestCase(test_id=failure.test_id, outcome="error"))
    report.failures.extend(hung)
    report.errors += len(hung)
    if not any(_SUMMARY.match(x) for x in lines) and data.exit_code != 0 and not hung:
        errors = _compile_errors(lines)
        if not errors:
            return no_report(data, f"cargo test failed before running tests (exit code {data.exit_code})")
        report.failures.extend(errors)
        report.errors += len(errors)
    return report


def _sections(lines: list[str]) -> dict[str, str]:
    """Each failed test's captured output, from its `---- name stdout ----` header to the next."""
    out: dict[str, list[str]] = {}
    current: str | None = None
    for line in lines:
        m = _SECTION.match(line)
        if m:
            current = m["name"]
            out.setdefault(current, [])
        elif current is not None and (line.strip() in ("failures:", "successes:") or _SUMMARY.match(line)):
            current = None
        elif current is not None:
            out[current].append(line)
    return {k: "\n".join(v).strip() for k, v in out.items()}


def _failure(name: str, text: str) -> TestFailure:
    file: str | None = None
    line: int | None = None
    message = ""
    old = _PANIC_OLD.search(text)
    if old:
        file, line, message = old["path"], int(old["line"]), old["msg"]
    else:
        rows = text.splitlines()
        for i, row in enumerate(rows):
            m = _PANIC_NEW.search(row)
            if m:
                file, line = m["path"], int(m["line"])
                message = "\n".join(r for r in rows[i + 1:i + 4] if not r.startswith("stack backtrace"))
                break
    return TestFailure(test_id=name, file=file, line=line, message=message.strip()[:2000], traceback=text)


def _hung(name: str, seconds: str) -> TestFailure:
    return TestFailure(test_id=name, kind="error", message=f"{name} was still running when the test run was "
                       f"stopped (over {seconds} s; libtest cannot end one test, so the whole run waited)")


def _compile_errors(lines: list[str]) -> list[TestFailure]:
    out: list[TestFailure] = []
    for i, row in enumerate(lines):
        m = _COMPILE_ERR.match(row)
        if not m or m["msg"].startswith(("could not compile", "aborting due to")):
            continue
        file, line = None, None
        block = lines[i:i + 12]
        for b in block[1:]:
            a = _ARROW.match(b)
            if a:
                file, line = a["path"], int(a["line"])
                break
        out.append(TestFailure(test_id="<build>", file=file, line=line, message=m["msg"],
                               traceback="\n".join(block), kind="error"))
    return out
