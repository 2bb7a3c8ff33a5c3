"""Per-test time limits from what each test took when it ended by itself (the adaptive per-test timeout).

The rule (docs/decisions/2026-11-adaptive-test-timeout.md): a test's limit is
`min(cap, max(FLOOR, FACTOR x reference))`, `cap` the setting (`sandbox.test_case_timeout`).
Its reference is the longest it took when it ended by itself (passed or failed, not
stopped at a limit) in this sandbox; else the suite's typical time (the median of those
times over all tests, earlier in the same run too); else none: the cap, or the floor once
a test has hung and none has ended by itself (the code loops; see the decision). The
python template's runner applies it per test during the run (`run_pytest.py`, which
keeps a copy of `limit`); other templates take one limit for the whole run.
"""

from __future__ import annotations

import re
import statistics
from dataclasses import dataclass
from typing import Any

from greenloop_sandbox.report import TestReport

FLOOR = 1.0  # seconds: no test is ended sooner (load on a shared machine, a GC pause)
FACTOR = 20.0  # times its reference
HUNG = re.compile(r"\bTimeout \(?>")  # pytest-timeout's failure message: "Timeout >2s", "Timeout (>2.0s) from ..."


def limit(reference: float | None, cap: float, *, looped: bool = False, factor: float = FACTOR) -> float:
    """One test's limit (see the module docstring); `looped`: a test hung and none ended by itself."""
    if factor <= 0 or cap <= 0:
        return cap
    if reference is None:
        return min(cap, FLOOR) if looped else cap
    return min(cap, max(FLOOR, factor * reference))


@dataclass(frozen=True)
class EarlyStop:
    """When a test run may stop before its last test: it can no longer beat the best state so far.

    `max_failures`: failing and erroring tests beyond which it stops (the best state's count on the
    same tests). `hung`: tests that hung in the best state; the first of them that hangs again stops
    the run (the change did not end the loop). Tests not run are failures saying why.
    """

    max_failures: int | None = None
    hung: tuple[str, ...] = ()
    report: bool = True  # the tests left out are reported (a test run), or just not run (the coverage pass)


def early_stop(state: TestReport, *, whole: bool) -> EarlyStop:
    """The early stop of a candidate's run against `state` (the best state so far, the whole suite's report).

    A run of the state's failing tests stops at the first that hung there and hangs again (there is
    nothing to count: all of them failed there). A whole-suite run stops once more tests failed than
    the state's: it decides whether the candidate becomes the state, so every test in it ran, or counts
    as failed for a reason that makes it no better.
    """
    if whole:
        return EarlyStop(max_failures=state.failed + state.errors)
    return EarlyStop(hung=tuple(f.test_id for f in state.failures if HUNG.search(f.message)))


class CaseTimes:
    """What the tests of one sandbox took when they passed, run after run: the references of `limit`."""

    def __init__(self, factor: float = FACTOR) -> None:
        self.factor = factor
        self.took: dict[str, float] = {}  # test id -> longest time it passed in
        self.hung: set[str] = set()  # tests stopped at their limit that have not passed since

    def record(self, report: TestReport) -> None:
        """Learn from a run's report: how long the passing tests took, and which tests hung."""
        hung = {f.test_id for f in report.failures if HUNG.search(f.message)}
        for case in report.cases:
            if case.test_id in hung:
                self.hung.add(case.test_id)
            elif case.outcome == "passed":
                self.took[case.test_id] = max(case.duration, self.took.get(case.test_id, 0.0))
                self.hung.discard(case.test_id)

    def typical(self) -> float | None:
        return statistics.median(self.took.values()) if self.took else None

    def run_limit(self, test_ids: list[str] | None, cap: float) -> float:
        """One limit for a whole run (templates without the per-test runner): the longest of its tests'."""
        if not test_ids:
            return cap  # which tests run is not known here
        typical, looped = self.typical(), bool(self.hung) and not self.took
        return max(limit(self.took.get(t, typical), cap, looped=looped or t in self.hung, factor=self.factor)
                   for t in test_ids)

    def payload(self, test_ids: list[str] | None, cap: float, stop: EarlyStop | None) -> dict[str, Any]:
        """What the python runner reads (the JSON file GREENLOOP_CASES names)."""
        wanted = set(test_ids) if test_ids else None
        return {
            "cap": cap, "floor": FLOOR, "factor": self.factor, "typical": self.typical(),
            "took": {t: s for t, s in self.took.items() if wanted is None or t in wanted},
            "hung": sorted(self.hung), "passed_any": bool(self.took),
            "max_failures": stop.max_failures if stop else None,
            "stop_on_hang": list(stop.hung) if stop and self.factor > 0 else [],
            "report_not_run": stop.report if stop else True,
        }


NOT_RUN = "not run:"  # the message of a test an early stop left out
