"""What every parser gets, and the fallback report when a run produced nothing parseable."""

from __future__ import annotations

import re
from dataclasses import dataclass

from greenloop_sandbox.report import TestFailure, TestReport


@dataclass(frozen=True)
class ParseInput:
    """The test command's outcome as a parser sees it."""

    output: str                 # combined stdout/stderr (capped)
    report: str | None = None   # the report file's text, when the template writes one
    exit_code: int = 0
    root: str = "/workspace"    # the workspace root inside the sandbox, to make paths relative


def relpath(path: str, root: str) -> str:
    """`path` relative to the workspace root (file:// and the root prefix removed)."""
    path = path.removeprefix("file://")
    root = root.rstrip("/") + "/"
    return path[len(root):] if path.startswith(root) else path


NO_RUN = "<test run>"  # the test id of the one error a run with no usable report gives
# The line a test runner's own output puts its error on: pytest's `E   ...` and `ERROR: ...`, python's last
# `SomeError: ...` line of a traceback.
_ERROR_LINE = re.compile(r"^(?:E\s+(?P<e>\S.*)|ERROR: (?P<err>.+)|(?P<exc>[\w.]*(?:Error|Exception|Warning)\b.*))$",
                         re.MULTILINE)


def runner_message(output: str) -> str:
    """The runner's own error in its output: the last `E   ...` line of pytest, else its `ERROR: ...`, else the
    last `SomeError: ...` line; "" when there is none."""
    found = {"e": "", "err": "", "exc": ""}
    for m in _ERROR_LINE.finditer(output):
        for key in found:
            if m[key]:
                found[key] = m[key].strip()
    return found["e"] or found["err"] or found["exc"]


def no_report(data: ParseInput, why: str) -> TestReport:
    """One error case carrying the output's tail, for runs that produced no usable report: its message says
    why and the runner's own error, its place the first workspace file the output names."""
    tail = "\n".join(data.output.strip().splitlines()[-30:])
    said = runner_message(data.output)
    file, line = first_location(data.output, data.root)
    return TestReport(
        errors=1,
        exit_code=data.exit_code,
        raw=data.output,
        failures=[TestFailure(test_id=NO_RUN, file=file, line=line, message=f"{why}: {said}" if said else why,
                              traceback=tail, kind="error")],
    )


def mark_timed_out(report: TestReport, seconds: float, tail: str) -> None:
    """A run the sandbox killed at its timeout is never green: its first failure says so, or one is added.

    A streamed report (node's TAP) stops mid-run with the tests so far passing, which would read
    as green; `tail` (the end of the report or output) is what the run got to.
    """
    report.timed_out = True
    why = f"test run timed out after {seconds:.0f}s"
    if report.failures:
        report.failures[0].message = f"{why}; {report.failures[0].message}"
        return
    report.errors += 1
    lines = "\n".join(tail.strip().splitlines()[-30:])
    report.failures.append(TestFailure(test_id="<test run>", message=f"{why} before all tests reported; the "
                                       "output so far is below", traceback=lines, kind="error"))


_LOCATION = re.compile(r"(?P<path>[^\s:()'\"]+\.[A-Za-z]+):(?P<line>\d+)(?::\d+)?")


def first_location(text: str, root: str, prefer: str | None = None) -> tuple[str | None, int | None]:
    """The first `path:line` in `text` inside the workspace (`prefer`red file first)."""
    found: list[tuple[str, int]] = []
    for m in _LOCATION.finditer(text):
        path = relpath(m["path"], root)
        if path.startswith("/") or "node:internal" in path or path.startswith("node:"):
            continue
        found.append((path, int(m["line"])))
    for path, line in found:
        if prefer is not None and path == prefer:
            return path, line
    return found[0] if found else (None, None)
