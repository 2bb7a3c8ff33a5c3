"""A test collection or report -> the Testing view's payloads: items with lines, results with diffs and frames."""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path, PurePosixPath

from pygls.uris import from_fs_path

from greenloop.lsp import diagnostics as diag
from greenloop.lsp import protocol as p
from greenloop_sandbox import TestCollection, TestFailure, TestReport

_FRAME = re.compile(r"(?:file://)?(?P<path>[^\s:()'\"]+\.[A-Za-z]+):(?P<line>\d+)")
MAX_FRAMES = 30


def uri_of(root: Path, rel: str) -> str:
    return from_fs_path(str(root / rel)) or (root / rel).as_uri()


def label_of(test_id: str) -> str:
    """The last part of an id, parameters kept: `tests/t.py::TestK::test_p[1]` -> `test_p[1]`."""
    return re.split(r"::|\s>\s", test_id)[-1].strip() or test_id


def discovered(root: Path, collection: TestCollection, text_of: diag.TextOf) -> p.DiscoverTestsResult:
    """The folder's tests with their definition lines, and the files that did not load."""
    tests = []
    lines_of: dict[str, list[str]] = {}
    for test in collection.tests:
        uri = line = None
        if test.file:
            uri = uri_of(root, test.file)
            lines = lines_of.setdefault(test.file, (text_of(test.file) or "").splitlines())
            line = diag.definition_line(lines, diag.name_of_test(test.test_id))
        tests.append(p.DiscoveredTest(id=test.test_id, label=label_of(test.test_id), uri=uri, line=line))
    problems = [problem(root, f) for f in collection.errors]
    message = ""
    if not tests and not problems:
        message = f"greenloop found no tests in {root.name}: add a test file (for pytest, tests/test_*.py)"
    elif not tests:
        message = f"greenloop found no tests in {root.name}: the test files did not load"
    return p.DiscoverTestsResult(folder_uri=root.as_uri(), tests=tests, problems=problems, message=message)


def problem(root: Path, failure: TestFailure) -> p.TestProblem:
    rel = diag.file_of_test(failure) if failure.file or "::" in failure.test_id else None
    uri = uri_of(root, rel) if rel and (root / rel).is_file() else None
    line = failure.line - 1 if uri and failure.line else None
    return p.TestProblem(id=failure.test_id, uri=uri, line=line, message=failure.message or "error",
                         text=failure.traceback)


def results(root: Path, report: TestReport, text_of: diag.TextOf, *, scope: list[str] | None,
            missing: Iterable[str] = ()) -> p.TestResultsParams:
    """Every case of the report; failures carry the diagnostic's place, expected/actual and frames."""
    failures = {f.test_id: f for f in report.failures}
    out = []
    for case in report.cases:
        failure = failures.pop(case.test_id, None)
        out.append(_result(root, case.test_id, case.outcome, case.duration, failure, text_of))
    problems = [problem(root, f) for f in failures.values()]  # failures of no case: the run, a file
    return p.TestResultsParams(folder_uri=root.as_uri(), scope=scope, results=out, missing=list(missing),
                               problems=problems)


def _result(root: Path, test_id: str, outcome: str, duration: float, failure: TestFailure | None,
            text_of: diag.TextOf) -> p.TestResult:
    kind: p.TestOutcome = outcome if outcome in ("passed", "failed", "error", "skipped") else "error"  # type: ignore[assignment]
    if failure is None:
        return p.TestResult(id=test_id, outcome=kind, duration=duration, message="", expected=None, actual=None,
                            uri=None, line=None, frames=[], output="")
    built = diag.build(failure, root, text_of)  # the same place as the test's diagnostic
    return p.TestResult(
        id=test_id, outcome=kind, duration=duration,
        message=failure.message.strip() or ("error" if failure.kind == "error" else "test failed"),
        expected=failure.expected, actual=failure.actual,
        uri=built.uri if built else None, line=built.diagnostic.range.start.line if built else None,
        frames=frames(root, failure.traceback), output=failure.traceback,
    )


def frames(root: Path, text: str) -> list[p.StackFrame]:
    """The traceback's `path:line` places that are workspace files, in the order written, without repeats."""
    out: list[p.StackFrame] = []
    seen: set[tuple[str, int]] = set()
    for match in _FRAME.finditer(text):
        rel = _in_workspace(root, match["path"])
        place = (rel or "", int(match["line"]))
        if rel is None or place in seen or place[1] < 1:
            continue
        seen.add(place)
        out.append(p.StackFrame(label=f"{rel}:{place[1]}", uri=uri_of(root, rel), line=place[1] - 1))
        if len(out) == MAX_FRAMES:
            break
    return out


def _in_workspace(root: Path, path: str) -> str | None:
    """A traceback's path as workspace-relative: as written, or an absolute path's tail (the sandbox's root
    differs from the editor's) that names a workspace file."""
    parts = PurePosixPath(path).parts
    start = 1 if path.startswith("/") else 0
    for index in range(start, len(parts)):
        rel = "/".join(parts[index:])
        if rel and ".." not in parts[index:] and (root / rel).is_file():
            return rel
        if not path.startswith("/"):
            return None
    return None
