"""Rung "checks": the failing tests, when they may change (generation's own, `loop.edit_tests`), right after the first rung.

A test written in the same run as the code is as likely to expect a wrong value as the code is to
compute one. The rung asks about the statements the failing tests stopped at (up to MAX_CHECKS,
check_statements.py), each given back corrected or as it is, never a check dropped; a reply that
rewrote the code instead is tested as code (salvage.py). When no such statement was found it asks for
the first failing test whole (function.py's form), or its file when more of its tests fail, right
after the first function rung. Settle's rewritten checks are this form with its one reply known.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from greenloop.agent.changes.testfiles import TestFiles
from greenloop.agent.changes.working_copy import WorkingCopy
from greenloop.agent.plan import DebugPlan
from greenloop.agent.prompting.files import render_prompt
from greenloop.agent.prompting.shows import RequestShows
from greenloop.agent.repair.approach import Approach, Form, ReplyRejected, ReplyUnchanged
from greenloop.agent.repair.check_statements import DEFINITIONS_ONLY, Check, splice_checks
from greenloop.agent.repair.file_form import FILE
from greenloop.agent.repair.ladder_rung import FILE_ROUTE_LINES, LadderState, Rung
from greenloop.agent.repair.prompts import checks_text, code_under_test, failing_test_targets
from greenloop.agent.repair.rungs.function import FUNCTION
from greenloop.agent.repair.rungs.region import REGION
from greenloop.agent.repair.salvage import rewritten_code
from greenloop.agent.repair.splice import SpliceError, Target, Unchanged
from greenloop.retrieval import RepoIndex
from greenloop_sandbox import TestReport

CHECKS_TOKENS = 600  # a sentence per check and the checks again: a few lines each
CHECKS_PLEASE = "Now give the {count} check(s), corrected or as they are, in one code block."


@dataclass(frozen=True)
class ChecksForm(Form):
    """The failing checks, each given back corrected or as it is."""

    checks: tuple[Check, ...] = ()  # the statements where the failing tests stopped
    route = "checks"

    def label(self, approach: Approach) -> str:
        return f"checks in {', '.join(dict.fromkeys(c.path for c in self.checks))} ({len(self.checks)} failing)"

    def kind_of(self, approach: Approach, index: int) -> str:
        return "checks"

    def reply_limit(self, approach: Approach, copy: WorkingCopy, cap: int) -> int | None:
        return CHECKS_TOKENS

    def please(self, approach: Approach) -> str:
        return CHECKS_PLEASE.format(count=len(self.checks))

    def prompt(self, approach: Approach, copy: WorkingCopy, index: RepoIndex, report: TestReport, tests: TestFiles,
               values: dict[str, str], workspace: Path, *, shows: RequestShows | None = None) -> str:
        values |= {"checks": checks_text(self.checks, approach.target.path), "count": str(len(self.checks)),
                   "related": code_under_test(index, failing_test_targets(index, report, tests), tests)}
        return render_prompt("repair_checks", workspace, **values)

    def read(self, approach: Approach, copy: WorkingCopy, reply: str, is_test: Callable[[str], bool]) -> DebugPlan:
        """A checks reply that rewrote the code under test instead is that code's candidate (salvage.py)."""
        try:
            files = {c.path: copy.read(c.path) or "" for c in self.checks}
            edits = splice_checks(self.checks, files, reply)
        except Unchanged as exc:
            raise ReplyUnchanged(str(exc)) from None
        except SpliceError as exc:
            salvaged = rewritten_code(copy, reply, approach.target.path, is_test) if str(exc) == DEFINITIONS_ONLY else []
            if not salvaged:
                raise ReplyRejected(str(exc)) from None
            return DebugPlan(diagnosis="the reply rewrote the code, not the checks", actions=list(salvaged))
        return DebugPlan(diagnosis="the failing checks corrected", actions=list(edits))


def checks_rung(checks: Sequence[Check]) -> Approach:
    """The statements the failing tests stopped at (all asked in one round; the target names the first's file)."""
    first = checks[0]
    target = Target(first.path, first.path, "checks", first.start_line, first.end_line)
    return Approach(ChecksForm(tuple(checks)), target,
                    "the failing checks: written with the code, what they expect may be wrong", test=True)


def given_rung(checks: Sequence[Check], given: str) -> Approach:
    """The checks form with its one candidate known (settle.py: the checks the request sided against, rewritten)."""
    return replace(checks_rung(checks), given=given,
                   why="the request sides with the code: the checks rewritten to expect what it gave")


class FailingTests(Rung):
    name = "checks"

    def applies(self, state: LadderState) -> list[Approach]:
        if not state.tests.writable:
            return []
        if state.checks:
            return [checks_rung(state.checks)]
        return [_test_rung(state.failing_tests[0], state)] if state.failing_tests else []

    def place(self, steps: list[Approach], state: LadderState) -> list[Approach]:
        """Right after the first rung (the checks), or after the first function rung (a failing test whole);
        first when the acceptance tests pass: the code does what the request states, the failing test is suspect."""
        brought = self.applies(state)
        if not brought:
            return steps
        if state.tests.spec_holds(state.report):
            at = 0
        elif state.checks:
            at = min(1, len(steps))
        else:
            at = next((i + 1 for i, s in enumerate(steps) if s.form in (FUNCTION, REGION)), len(steps))  # the first code rung
        return [*steps[:at], *brought, *steps[at:]]


def _test_rung(test: Target, state: LadderState) -> Approach:
    """The first failing test, or its whole file when more of its tests fail (one round corrects them all)."""
    failing = sum(1 for f in state.report.failures if (f.file or f.test_id.split("::", 1)[0]) == test.path)
    if failing > 1 and state.lines(test.path) <= FILE_ROUTE_LINES:
        return Approach(FILE, Target(test.path, test.path, "file", 1, 0),
                        f"the failing tests' file ({failing} fail): written with the code, their expected values "
                        "may be wrong", test=True)
    return Approach(FUNCTION, test, "the failing test: written with the code, its expected values may be wrong",
                    test=True)


RUNG = FailingTests()
