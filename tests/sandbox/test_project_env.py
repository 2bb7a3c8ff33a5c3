"""A project's own test command over its template, reading any command's outcome, and the local backend."""

from __future__ import annotations

from pathlib import Path

import pytest

from greenloop_sandbox import (
    LocalSandbox,
    ProjectEnv,
    SandboxError,
    TestReport,
    load_template,
    read_dockerfile,
)
from greenloop_sandbox.parsers import ParseInput, parse_report
from greenloop_sandbox.parsers.auto import COMMAND_ID

JUNIT = """<?xml version="1.0"?><testsuite><testcase classname="t" name="ok" time="0.1"/>
<testcase classname="t" name="bad" time="0.1"><failure message="boom">t.py:3: boom</failure></testcase></testsuite>"""
TAP = "make[1]: Entering directory\nTAP version 13\nok 1 - adds\nnot ok 2 - subtracts\n1..2\n"
LIBTEST = "running 1 test\ntest tests::adds ... ok\n\ntest result: ok. 1 passed; 0 failed; 0 ignored\n"
PY_TRACEBACK = """python3 checks/run.py
Traceback (most recent call last):
  File "/usr/lib/python3.11/runpy.py", line 5, in run
  File "/workspace/checks/run.py", line 4, in <module>
    assert add(2, 3) == 5
AssertionError
make: *** [Makefile:2: check] Error 1
"""


def _parse(output: str, exit_code: int, report: str | None = None) -> TestReport:
    return parse_report("auto", ParseInput(output=output, report=report, exit_code=exit_code))


def test_the_project_command_replaces_the_templates_and_keeps_its_language() -> None:
    python = load_template("python")
    env = ProjectEnv(test_command="make check {x}", test_report="build/junit.xml").apply(python)
    assert env.language == python.language and env.recipe_hash == python.recipe_hash  # same image
    assert env.test_argv("/tmp/r", ["t.py::a"], case_timeout=5) == "make check {x}"  # never selects tests
    assert not env.selects_tests and env.parser == "auto" and env.own_command == "make check {x}"
    assert env.report_path("/tmp/greenloop-report", "/workspace") == "/workspace/build/junit.xml"
    assert ProjectEnv().apply(python) is python
    with pytest.raises(SandboxError, match="not a clean path"):
        ProjectEnv(test_command="make", test_report="../out.xml").apply(python)


def test_a_named_junit_report_is_read_and_a_failing_command_with_green_tests_is_not_green() -> None:
    report = _parse("", 1, JUNIT)
    assert (report.parser, report.passed, report.failed) == ("junit", 1, 1)
    xml_green = JUNIT.replace('<failure message="boom">t.py:3: boom</failure>', "")
    lint_failed = _parse("lint.py:7: E501 line too long\n", 2, xml_green)
    assert lint_failed.passed == 2 and not lint_failed.green
    assert lint_failed.failures[0].file == "lint.py" and "exited with code 2" in lint_failed.failures[0].message


def test_tap_and_libtest_are_recognised_in_the_output() -> None:
    tap = _parse(TAP, 2)
    assert (tap.parser, tap.passed, tap.failed) == ("tap", 1, 1)
    libtest = _parse(LIBTEST, 0)
    assert (libtest.parser, libtest.passed, libtest.green) == ("libtest", 1, True)


def test_without_a_report_the_exit_code_decides_and_the_frames_come_from_the_output() -> None:
    green = _parse("all checks passed\n", 0)
    assert green.green and green.parser == "exit-code" and green.cases[0].test_id == COMMAND_ID
    red = _parse(PY_TRACEBACK, 2)
    assert not red.green and (red.failed, red.errors) == (1, 0)
    failure = red.failures[0]
    assert (failure.file, failure.line) == ("checks/run.py", 4)  # the workspace's frame, not runpy's
    assert "AssertionError" in failure.traceback and "exited with code 2" in failure.message
    plain = _parse("src/calc.c:12: error: expected ';'\n", 1)
    assert (plain.failures[0].file, plain.failures[0].line) == ("src/calc.c", 12)


def test_a_projects_dockerfile_folder_is_its_build_context_without_greenloops_own_files(tmp_path: Path) -> None:
    assert read_dockerfile(tmp_path) == ("", ())
    folder = tmp_path / ".greenloop"
    (folder / "prompts").mkdir(parents=True)
    (folder / "Dockerfile").write_text("FROM scratch\n")
    (folder / "tool.sh").write_text("echo hi\n")
    for own in ("runs.sqlite3", "runs.sqlite3-wal", "plan.md", "prompts/fix.md"):
        (folder / own).write_text("greenloop's")
    text, context = read_dockerfile(tmp_path)
    assert text == "FROM scratch\n" and [name for name, _, _ in context] == ["tool.sh"]


async def test_the_local_backend_runs_the_own_command_and_says_the_image_is_not_used() -> None:
    project = ProjectEnv(test_command="mkdir -p out && printf 'TAP version 13\\nok 1 - a\\n1..1\\n' > out/r.tap",
                         test_report="out/r.tap", image="some/image:1")
    async with LocalSandbox(load_template("python"), project=project) as sb:
        await sb.sync({"out/r.tap": b"TAP version 13\nnot ok 1 - stale\n1..1\n"})
        report = await sb.run_tests()
        assert (report.parser, report.passed, report.failed) == ("tap", 1, 0)
        assert "project.image" in sb.note and "Docker backend" in sb.note
