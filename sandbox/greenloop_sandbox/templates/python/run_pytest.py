"""The python template's test runner: pytest with per-test limits, an early stop, and timed imports.

Run as `python3 run_pytest.py <pytest args>` inside the sandbox (baked into the image, or from
the package on the local backend's host). Not imported by greenloop_sandbox. With GREENLOOP_CASES
naming a JSON file (greenloop_sandbox/case_times.py writes it), each test gets its own limit and
the run stops once it can no longer beat the best state (`CaseLimits`). An old pytest whose assertion
rewriting cannot compile on this Python runs with plain asserts (`plain_asserts`).
"""

from __future__ import annotations

import json
import os
import re
import signal
import sys
from collections.abc import Generator
from types import FrameType
from typing import Any

import pytest


class ImportTimeout:
    """Importing a test module (and the code it imports) gets pytest-timeout's `--timeout` too.

    pytest-timeout covers a test's setup, call and teardown, not collection: module-level code
    in a loop held the run until the whole run's timeout, with no frames. The failure is raised
    inside the import, so the collection error carries the frames where it hung.
    """

    @pytest.hookimpl(hookwrapper=True)
    def pytest_make_collect_report(self, collector: pytest.Collector) -> Generator[None, None, None]:
        seconds = collector.config.getoption("timeout", None) if isinstance(collector, pytest.Module) else None
        if not seconds:
            yield
            return

        def stop(signum: int, frame: FrameType | None) -> None:
            __tracebackhide__ = True
            pytest.fail(f"Timeout >{seconds:g}s importing {collector.nodeid}")

        previous = signal.signal(signal.SIGALRM, stop)
        signal.setitimer(signal.ITIMER_REAL, float(seconds))
        try:
            yield
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, previous)


HUNG = re.compile(r"\bTimeout \(?>")  # pytest-timeout's failure: "Timeout >2s", "Timeout (>2.0s) from pytest-timeout"


def limit(reference: float | None, cap: float, floor: float, factor: float, looped: bool) -> float:
    """A copy of greenloop_sandbox.case_times.limit (this file runs without greenloop_sandbox)."""
    if factor <= 0 or cap <= 0:
        return cap
    if reference is None:
        return min(cap, floor) if looped else cap
    return min(cap, max(floor, factor * reference))


class CaseLimits:
    """Each test's own timeout (a `timeout` marker, unless it has one) from the times the sandbox
    measured, learning during the run too; and an early stop: once more tests failed than the best
    state's count (`max_failures`), or a test that hung in the best state hangs again (`stop_on_hang`),
    the tests left are not run but reported failed, saying why."""

    def __init__(self, data: dict[str, Any]) -> None:
        self.cap, self.floor, self.factor = float(data["cap"]), float(data["floor"]), float(data["factor"])
        self.took: dict[str, float] = dict(data.get("took", {}))
        self.typical: float | None = data.get("typical")
        self.hung_before = set(data.get("hung", []))
        self.passed_any = bool(data.get("passed_any"))
        self.max_failures: int | None = data.get("max_failures")
        self.stop_on_hang = set(data.get("stop_on_hang", []))
        self.report_not_run = bool(data.get("report_not_run", True))
        self.hung_now = False
        self.passed_now = False
        self.failed: set[str] = set()
        self.stopped = ""

    def limit_for(self, nodeid: str) -> float:
        # the suite's typical time from earlier runs only: a first run gives every test the cap (a slow
        # test after fast ones is no hang), except once the code loops (a hang, and no test passed)
        looped = nodeid in self.hung_before or ((bool(self.hung_before) or self.hung_now)
                                                and not (self.passed_any or self.passed_now))
        return limit(self.took.get(nodeid, self.typical), self.cap, self.floor, self.factor, looped)

    @pytest.hookimpl(hookwrapper=True, tryfirst=True)
    def pytest_runtest_protocol(self, item: pytest.Item) -> Generator[None, None, None]:
        if not self.stopped and self.factor > 0 and item.get_closest_marker("timeout") is None:
            item.add_marker(pytest.mark.timeout(self.limit_for(item.nodeid)))
        yield

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        nodeid = report.nodeid
        if report.failed:
            self.failed.add(nodeid)
            if report.when == "call" and HUNG.search(report.longreprtext):
                self.hung_now = True
                if nodeid in self.stop_on_hang and not self.stopped:
                    self.stopped = f"{nodeid} hung again, as it did in the best state so far"
        elif report.when == "call" and report.passed:
            self.passed_now = True
        if (self.max_failures is not None and len(self.failed) > self.max_failures and not self.stopped):
            self.stopped = (f"{len(self.failed)} tests failed, more than the {self.max_failures} of the best "
                            "state so far")


class StopEarly:
    """Runs the tests left once `CaseLimits` stopped as failures that say they were not run."""

    def __init__(self, limits: CaseLimits) -> None:
        self.limits = limits

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_protocol(self, item: pytest.Item) -> bool | None:
        if not self.limits.stopped:
            return None
        if not self.limits.report_not_run:
            return True  # the coverage pass: a test not run has no lines to give
        why = f"not run: the run stopped early ({self.limits.stopped})"
        item.ihook.pytest_runtest_logstart(nodeid=item.nodeid, location=item.location)
        for when, outcome in (("setup", "passed"), ("call", "failed"), ("teardown", "passed")):
            report = pytest.TestReport(item.nodeid, item.location, {}, outcome,  # type: ignore[arg-type]
                                       why if outcome == "failed" else None, when)  # type: ignore[arg-type]
            item.ihook.pytest_runtest_logreport(report=report)
        item.ihook.pytest_runtest_logfinish(nodeid=item.nodeid, location=item.location)
        return True


def plugins() -> list[object]:
    """The runner's plugins: timed imports, and with GREENLOOP_CASES the per-test limits and early stop."""
    found: list[object] = [ImportTimeout()]
    path = os.environ.get("GREENLOOP_CASES")
    if path and os.path.isfile(path):
        with open(path, encoding="utf-8") as fh:
            limits = CaseLimits(json.load(fh))
        found += [limits, StopEarly(limits)]
    return found


PLAIN_NOTE = "greenloop: pytest {version} cannot rewrite asserts on Python {python}; they run plain"


def plain_asserts(args: list[str]) -> bool:
    """Whether this pytest's assertion rewriting fails to compile on this Python, so its asserts must run plain.

    An old pytest (3.x, 4.x) builds syntax trees as the Python of its day did; on Python 3.10 and later
    `compile` refuses them (`required field "lineno" missing from alias`), in every test module and conftest,
    before any test ran. The environment step may pick such a release for a project whose tests need an API
    newer ones removed (`Node.get_marker`), so the rewriter is tried here on two lines; a pytest whose rewriter
    cannot even be called that way is left as it is."""
    if any(arg.startswith("--assert") for arg in args):
        return False
    import ast
    import inspect

    source = b"import os\nassert os.sep, 'sep'\n"
    tree = ast.parse(source)
    try:
        from _pytest.assertion import rewrite

        if "source" in inspect.signature(rewrite.rewrite_asserts).parameters:
            rewrite.rewrite_asserts(tree, source)  # type: ignore[call-arg,unused-ignore]
        else:
            rewrite.rewrite_asserts(tree)  # type: ignore[call-arg,unused-ignore]
    except Exception:  # another pytest's internals: not this check's to judge
        return False
    try:
        compile(tree, "<greenloop-check>", "exec", dont_inherit=True)
    except (TypeError, ValueError):
        return True
    return False


def arguments(args: list[str]) -> list[str]:
    """pytest's arguments for this pytest on this Python: `--assert=plain` first when `plain_asserts` says so,
    with a note on stdout (the environment step reads it). The warm worker's runs take them from here too."""
    if not plain_asserts(args):
        return args
    print(PLAIN_NOTE.format(version=pytest.__version__, python=".".join(map(str, sys.version_info[:2]))))
    return ["--assert=plain", *args]


def main() -> None:
    sys.path[0] = os.getcwd()  # as `python3 -m pytest` has it: the project's modules import from its root
    code = pytest.main(arguments(sys.argv[1:]), plugins=plugins())
    sys.stdout.flush()
    sys.stderr.flush()
    # Leave without atexit handlers: multiprocessing joins its children there, so a timed-out
    # test's hung child would hold the run until the whole run's timeout. The sandbox kills
    # such leftovers once this returns.
    os._exit(int(code))


if __name__ == "__main__":
    main()
