"""The best state a fix loop has reached, so that a run ending red leaves that state and not its last."""

from __future__ import annotations

from dataclasses import dataclass, field

from greenloop.agent.changes.working_copy import WorkingCopy
from greenloop_sandbox import TestReport


@dataclass
class BestState:
    """The files of the run's best test report so far (most passing, then fewest errors and failing).

    Qwen2.5-Coder 0.5B overwrote a 40-line test file with one `assert` in a run's last
    iteration: 1 passed / 8 failed became 1 error, and that was the result offered.
    """

    report: TestReport | None = None
    files: dict[str, bytes] = field(default_factory=dict)
    iteration: int = 0

    def offer(self, report: TestReport, copy: WorkingCopy, iteration: int) -> None:
        """Remember the working copy's files when `report` is better than the best so far."""
        if self.report is None or _better(report, self.report):
            self.report, self.files, self.iteration = report, copy.files(), iteration

    def keep(self, copy: WorkingCopy, report: TestReport) -> tuple[TestReport, str]:
        """The report to end with and what to tell the person; restores the best files when they
        are better than the last (`report`)."""
        if self.report is None or not _better(self.report, report):
            return report, ""
        copy.restore(self.files)
        when = "before any change" if self.iteration == 0 else f"after iteration {self.iteration}"
        return self.report, (
            f"Kept the files as they were {when} ({self.report.summary()}); the later changes left "
            f"the tests worse ({report.summary()})."
        )


def _better(a: TestReport, b: TestReport) -> bool:
    """Most passing, then fewest errors, then fewest failing: a test that runs and fails is worth
    more than one that cannot be collected (the 0.5B model's one-`assert` test file was 1 error
    against the 3 failing tests it replaced, and ranked better by "fewest not passing")."""
    return (a.passed, -a.errors, -a.failed) > (b.passed, -b.errors, -b.failed)
