"""Which tests a workspace has: its test ids and their files, and the errors that kept others from loading.

`collect_tests` runs the template's `collect_command` (python: `pytest --collect-only -q`) through
`Sandbox.exec`. A language without one (node, rust, a project's own command) is collected by running
its tests once: the report's cases are the ids. A file that does not load is a `TestFailure` of kind
"error" in `errors`; "no tests" is an empty collection, never an exception.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from pydantic import BaseModel, Field

from greenloop_sandbox.report import TestFailure

if TYPE_CHECKING:
    from greenloop_sandbox.base import Sandbox

_ERROR_HEADER = re.compile(r"^_+ ERROR collecting (?P<path>.+?) _+$")
_SECTION_END = re.compile(r"^(=+|_+) ")
_PYTEST_FINE = (0, 1, 2, 5)  # ok, tests failed, interrupted by collection errors, no tests collected


class CollectedTest(BaseModel):
    """One test the runner would run."""

    __test__ = False

    test_id: str
    file: str | None = Field(default=None, description="Workspace-relative path of the test file, if known.")


class TestCollection(BaseModel):
    """Every test found, plus what could not be collected (a test file that does not import)."""

    __test__ = False

    tests: list[CollectedTest] = Field(default_factory=list)
    errors: list[TestFailure] = Field(default_factory=list)
    ran: bool = Field(default=False, description="Collected by running the tests (no collect command).")


async def collect_tests(sandbox: Sandbox, *, timeout: float | None = None) -> TestCollection:  # noqa: ASYNC109
    """The synced workspace's tests; SandboxError only where the sandbox itself fails."""
    command = sandbox.template.collect_command
    if not command:
        report = await sandbox.run_tests(timeout=timeout)
        files = {f.test_id: f.file for f in report.failures}
        tests = [CollectedTest(test_id=c.test_id, file=files.get(c.test_id) or _file_of(c.test_id))
                 for c in report.cases]
        known = {c.test_id for c in report.cases}
        errors = [f for f in report.failures if f.test_id not in known]
        return TestCollection(tests=tests, errors=errors, ran=True)
    result = await sandbox.exec(command, timeout=timeout or sandbox.limits.test_timeout)
    text = result.stdout + ("\n" + result.stderr if result.stderr else "")
    collection = parse_pytest_collect(text)
    if result.timed_out:
        collection.errors.append(_whole_run_error(f"collecting the tests timed out after {result.duration:.0f}s",
                                                  text))
    elif result.exit_code not in _PYTEST_FINE:
        collection.errors.append(_whole_run_error(f"collecting the tests failed (exit code {result.exit_code})",
                                                  text))
    return collection


def parse_pytest_collect(text: str) -> TestCollection:
    """`pytest --collect-only -q` output: one id a line up to the first blank line, then ERROR sections."""
    lines = text.splitlines()
    tests: list[CollectedTest] = []
    for line in lines:
        if not line.strip():
            break
        if "::" in line and not line.startswith((" ", "=", "_")):
            tests.append(CollectedTest(test_id=line.strip(), file=_file_of(line.strip())))
    errors: list[TestFailure] = []
    for index, line in enumerate(lines):
        header = _ERROR_HEADER.match(line)
        if header is None:
            continue
        body: list[str] = []
        for follow in lines[index + 1:]:
            if _SECTION_END.match(follow):
                break
            body.append(follow)
        path = header["path"].strip()
        message = next((b[1:].strip() for b in reversed(body) if b.startswith("E ")), "") or "the file did not load"
        errors.append(TestFailure(test_id=path, file=path if "/" in path or path.endswith(".py") else None,
                                  message=message, traceback="\n".join(body).strip(), kind="error"))
    return TestCollection(tests=tests, errors=errors)


def _file_of(test_id: str) -> str | None:
    head = test_id.split("::", 1)[0]
    return head if "::" in test_id and ("/" in head or "." in head) else None


def _whole_run_error(message: str, output: str) -> TestFailure:
    tail = "\n".join(output.strip().splitlines()[-30:])
    return TestFailure(test_id="<collection>", message=message, traceback=tail, kind="error")
