"""The state's tests run in the sandbox, and the event that says what they gave."""

from __future__ import annotations

from typing import TYPE_CHECKING

from greenloop.agent.changes.working_copy import WorkingCopy
from greenloop.agent.events import TestsRan
from greenloop_sandbox import TestReport

if TYPE_CHECKING:
    from greenloop.agent.orchestration.run_context import RunContext


async def run_tests_on(context: RunContext, copy: WorkingCopy, test_ids: list[str] | None) -> TestReport:
    """Sync the working copy into the sandbox (changed files only) and run the tests."""
    await context.ports.sandbox.sync(copy.files(), copy.deleted())
    return await context.ports.sandbox.run_tests(test_ids, timeout=context.settings.sandbox.test_timeout)


def tests_ran(context: RunContext, iteration: int, report: TestReport) -> TestsRan:
    return context.stamp(
        TestsRan(
            iteration=iteration,
            passed=report.passed,
            failed=report.failed,
            errors=report.errors,
            skipped=report.skipped,
            failures=[f.model_dump() for f in report.failures],
            duration=report.duration,
        )
    )
