"""The gates a green passes before it is offered as done: no passing test turned red, no covering test much slower.

A green round is green on the tests the run ran (the failing tests, then the run's suite, which may be a few
named tests). Before it is offered, the tests that covered the changed definitions in the coverage pass run
on it too (or, without a pass, the tests whose file names a changed definition), and the whole suite when the
last whole run took under `loop.full_suite_seconds`. A test that passed on the state and fails with the change
is run once more with the change: failing again, the change broke it, and the green is not green; passing,
the test is flaky, said, and it does not block. The passing tests that cover a changed definition are timed on
both sides: 3x slower and at least 50 ms slower makes the change risky ("the tests that call `f` take 129x
longer"), whatever its kind. Every run obeys the per-test limits; a run that reaches its whole-run timeout ends
the gate with a line saying so, and a green whose own gate run did not end is only plausible.
"""

from __future__ import annotations

import ast
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, field

from greenloop.agent.ports import SandboxPort
from greenloop.agent.repair.risk import functions
from greenloop_sandbox import TestReport
from greenloop_sandbox.report import TestCase
from greenloop_sandbox.spectrum import Spectrum

SLOWER = 3.0  # times the state's time ...
SLOWER_BY = 0.05  # ... and at least this many seconds more, over the passing tests that cover a changed definition
RED = ("failed", "error")


@dataclass(frozen=True)
class Changed:
    """The definitions a change touches: their names, and their lines in the state's text (path -> lines)."""

    names: tuple[str, ...]
    lines: Mapping[str, frozenset[int]]


@dataclass(frozen=True)
class Gate:
    """What the gate needs from the loop: the sandbox, one run's timeout, the run's suite, the whole suite's cost."""

    sandbox: SandboxPort
    timeout: float  # one gate run's whole-run timeout (`sandbox.test_timeout`)
    suite: list[str] | None  # the run's tests; None: all of them (a green ran the whole suite already)
    full_suite_seconds: float  # `loop.full_suite_seconds`: the whole suite runs when its last run took under it
    whole_seconds: float | None = None  # the last whole run's time (None: none yet)


@dataclass(frozen=True)
class GateResult:
    """What the gates found: tests the change broke, flaky ones, why it is risky, and lines for the run."""

    broken: tuple[str, ...] = ()  # passed on the state, failed twice with the change
    flaky: tuple[str, ...] = ()  # failed once with the change, passed when run again
    slower: str = ""  # a risk reason: the covering tests' slowdown
    unfinished: str = ""  # a risk reason: the gate's own run with the change did not end
    notes: tuple[str, ...] = ()  # what the run is told (a whole suite too slow to run, flaky tests)
    ran: int = 0  # gate runs made
    whole_seconds: float | None = None  # the whole suite's time as now known
    failures: tuple[str, ...] = field(default=())  # the broken tests' first failure lines (the next round's feedback)

    @property
    def risk(self) -> str:
        return "; ".join(r for r in (self.unfinished, self.slower) if r)


def changed_definitions(before: Mapping[str, str], after: Mapping[str, str]) -> Changed:
    """The functions a change edits (python, by qualified name), with their lines before it; a file of
    another language counts whole."""
    names: list[str] = []
    lines: dict[str, frozenset[int]] = {}
    for path in sorted(set(before) | set(after)):
        old, new = before.get(path, ""), after.get(path, "")
        if old == new:
            continue
        if not path.endswith(".py"):
            names.append(path)
            lines[path] = frozenset(range(1, old.count("\n") + 2))
            continue
        was, now = functions(old), functions(new)
        touched: set[int] = set()
        for name, node in was.items():
            if name not in now or ast.dump(node) != ast.dump(now[name]):
                names.append(name)
                touched.update(range(node.lineno, (node.end_lineno or node.lineno) + 1))
        if touched:
            lines[path] = frozenset(touched)
    return Changed(tuple(dict.fromkeys(names)), lines)


def covering(spectrum: Spectrum | None, changed: Changed, texts: Mapping[str, str]) -> list[str]:
    """The tests that ran a changed definition's lines in the coverage pass; without a pass, the test files
    whose text names a changed definition (a word of it), as ids that select the whole file."""
    if spectrum is not None and spectrum.tests:
        return [t.test_id for t in spectrum.tests
                if any(set(numbers) & changed.lines.get(path, frozenset()) for path, numbers in t.lines.items())]
    words = [re.compile(rf"\b{re.escape(n.rsplit('.', 1)[-1])}\b") for n in changed.names]
    return [path for path, text in sorted(texts.items()) if any(w.search(text) for w in words)]


async def check(gate: Gate, state: Mapping[str, bytes], candidate: Mapping[str, bytes], state_report: TestReport,
                green_report: TestReport, spectrum: Spectrum | None, test_texts: Mapping[str, str]) -> GateResult:
    """The gates for one green: `state` and `candidate` the files before and with the change, `state_report` the
    state's last run, `green_report` the green run, `test_texts` the test files' texts (for `covering`)."""
    changed = changed_definitions(_texts(state, candidate), _texts(candidate, state))
    cover = set(covering(spectrum, changed, test_texts))
    after = {c.test_id: c for c in green_report.cases}
    before = {c.test_id: c for c in state_report.cases}
    notes: list[str] = []
    runs = 0
    whole_seconds = gate.whole_seconds
    whole = gate.suite is not None and gate.full_suite_seconds > 0 and (whole_seconds is None or whole_seconds < gate.full_suite_seconds)
    extra = sorted(t for t in cover if t not in after and not _in_file(t, after))
    if whole:
        limit = gate.timeout if whole_seconds is not None else min(gate.timeout, gate.full_suite_seconds)
        run = await _run(gate.sandbox, candidate, state, None, limit)
        runs += 1
        if run.timed_out:  # too slow to run whole (or the change hangs: its covering tests say which)
            whole_seconds = math.inf
            notes.append(f"The whole suite did not end in {limit:g} s: the gate ran only the tests that cover the "
                         "change (loop.full_suite_seconds).")
        else:
            whole_seconds = run.duration
            after.update({c.test_id: c for c in run.cases})
            extra = [t for t in extra if t not in after and not _in_file(t, after)]
    if extra:
        run = await _run(gate.sandbox, candidate, state, extra, gate.timeout)
        runs += 1
        if run.timed_out:
            await gate.sandbox.sync(candidate, _gone(candidate, state))
            return GateResult(unfinished=f"the tests that cover it did not end in {gate.timeout:g} s",
                              notes=(*notes, f"The regression gate stopped: the {len(extra)} test(s) that cover the "
                                             f"change did not end in {gate.timeout:g} s."),
                              ran=runs, whole_seconds=whole_seconds)
        after.update({c.test_id: c for c in run.cases})
    # what the state gave, where its last run did not say: the red tests (were they green?) and the covering ones
    cover = {t for t in after if t in cover or t.split("::", 1)[0] in cover}
    unknown = [t for t, c in after.items() if t not in before and (c.outcome in RED or t in cover)]
    if unknown:
        run = await _run(gate.sandbox, state, candidate, unknown, gate.timeout)
        runs += 1
        before.update({c.test_id: c for c in run.cases if not run.timed_out})
    red = [t for t, c in after.items() if c.outcome in RED and t in before and before[t].outcome == "passed"]
    broken: list[str] = []
    flaky: list[str] = []
    failures: list[str] = []
    if red:
        again = await _run(gate.sandbox, candidate, state, red, gate.timeout)
        runs += 1
        outcome = {c.test_id: c.outcome for c in again.cases}
        flaky = [t for t in red if outcome.get(t) == "passed"]
        broken = [t for t in red if t not in flaky]
        failures = [f"{f.test_id}: {' '.join(f.message.split())[:200]}" for f in again.failures if f.test_id in broken]
        if flaky:
            notes.append(f"Flaky: {', '.join(flaky)} failed with the change and passed when run again; "
                         "it does not block the change.")
    else:
        await gate.sandbox.sync(candidate, _gone(candidate, state))
    slower = slowdown(changed, sorted(cover), before, after)
    return GateResult(tuple(broken), tuple(flaky), slower, "", tuple(notes), runs, whole_seconds, tuple(failures))


def slowdown(changed: Changed, cover: list[str], before: Mapping[str, TestCase], after: Mapping[str, TestCase]) -> str:
    """Why the change is risky for its time: the passing tests that cover it take `SLOWER` times as long (and
    `SLOWER_BY` more); "" otherwise."""
    both = [t for t in cover if t in before and t in after
            and before[t].outcome == "passed" and after[t].outcome == "passed"]
    was = sum(before[t].duration for t in both)
    now = sum(after[t].duration for t in both)
    if not both or now < SLOWER * was or now - was < SLOWER_BY:
        return ""
    times = f"{now / was:.0f}x" if was > 0 else f"{now - was:.2f} s"
    names = ", ".join(f"`{n.rsplit('.', 1)[-1]}`" for n in changed.names[:3])
    return f"the tests that call {names} take {times} longer"


async def _run(sandbox: SandboxPort, files: Mapping[str, bytes], other: Mapping[str, bytes], ids: list[str] | None,
               seconds: float) -> TestReport:
    """The tests (`ids`, None: all) on `files`, `other`'s files that `files` lacks removed."""
    await sandbox.sync(files, _gone(files, other))
    return await sandbox.run_tests(ids, timeout=seconds)


def _in_file(test: str, cases: Mapping[str, TestCase]) -> bool:
    """A file's id (`test_x.py`) whose tests the cases hold already."""
    return "::" not in test and any(t.split("::", 1)[0] == test for t in cases)


def _gone(files: Mapping[str, bytes], other: Mapping[str, bytes]) -> frozenset[str]:
    return frozenset(p for p in other if p not in files)


def _texts(files: Mapping[str, bytes], other: Mapping[str, bytes]) -> dict[str, str]:
    """The texts of the files that differ between the two trees, as `files` has them."""
    return {p: files.get(p, b"").decode("utf-8", "replace")
            for p in set(files) | set(other) if files.get(p) != other.get(p)}
