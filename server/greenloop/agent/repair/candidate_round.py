"""One round: ask for N candidates, test each on its own fork of the working copy, keep the best.

Candidates are asked with the same messages, each with its own seed: the first greedy, the rest hotter;
as many go out at once as the client sends together (asks.py: one at a time on a one-slot server, whose
prompt cache then reads the prompt once), and a reply known to echo the code is stopped while it streams. Each candidate is
applied to a fork and run in the warm sandbox, the failing tests first and the whole suite when
they pass; the round stops at the first candidate that turns everything green. When the sandbox port
holds several sandboxes (`sandbox.workers`), the next candidate is asked while earlier ones are tested,
each in a sandbox of its own; events still go to the sink in the order asked. The round returns
a frozen `RoundResult`; the loop moves to its best candidate only when that is strictly better.
"""

from __future__ import annotations

import asyncio
import difflib
import time
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass, field, replace
from types import MappingProxyType
from typing import Literal

from greenloop.agent.changes.actions import apply_plan
from greenloop.agent.changes.testfiles import TestFiles
from greenloop.agent.changes.working_copy import WorkingCopy
from greenloop.agent.event_sink import EventSink
from greenloop.agent.events import CandidateAsked, CandidateTested, InstalledPackage, Message
from greenloop.agent.ports import SandboxPort
from greenloop.agent.prompting.material import tidy
from greenloop.agent.repair.approach import Approach, ReplyRejected, ReplyUnchanged, read_reply
from greenloop.agent.repair.asks import Asking, RoundAsks
from greenloop.agent.repair.check_statements import COLLECTION_ERROR
from greenloop.agent.repair.environments import CandidateEnvironments
from greenloop.agent.repair.progress import further, reached
from greenloop.agent.repair.prompts import prompt_hash
from greenloop.agent.repair.tried import Tried
from greenloop.llm import ContextOverflow, LLMClient
from greenloop_sandbox import TestReport
from greenloop_sandbox.case_times import early_stop

TRIED_BEFORE = ("That change was tested already, and the tests then said: {failure}\n"
                "Make a different change. Give the whole corrected {what} in one code block.")
Ended = Literal["green", "better", "nothing_better", "no_candidates", "budget"]
Environment = tuple[tuple[str, ...], tuple[str, ...], tuple[InstalledPackage, ...]]  # packages, commands, installs


@dataclass(frozen=True)
class RoundResult:
    """What a round tried and what the loop should do with it."""

    approach: Approach
    tried: tuple[Tried, ...]
    best: Tried | None
    ended: Ended
    report: TestReport | None = None  # the whole suite on the best candidate (when it ran)
    files: Mapping[str, bytes] | None = None  # the best candidate's files
    packages: tuple[str, ...] = ()  # what the best candidate installed (the change set lists it)
    commands: tuple[str, ...] = ()
    installs: tuple[InstalledPackage, ...] = ()  # the distributions `packages` put in, with their origins
    tested: Mapping[int, str] = field(default_factory=dict)  # this round's changes (fingerprints) -> what they gave

    @property
    def moved(self) -> bool:
        return self.ended in ("green", "better")


@dataclass
class RoundInputs:
    """What a round needs from the loop."""

    llm: LLMClient
    sandbox: SandboxPort
    tests: TestFiles
    messages: list[dict[str, str]]
    count: int
    temperature: float  # of the candidates after the first
    next_seed: Callable[[], int | None]
    over_budget: Callable[[], str | None]
    test_timeout: float
    iteration: int
    subset: bool = True  # run the failing tests first (runners whose ids select tests)
    seen: Mapping[int, str] = field(default_factory=dict)  # fingerprints tested in earlier rounds -> what they gave
    suite: list[str] | None = None  # the run's tests ("the whole suite"); None: all of them
    deadline: float | None = None  # time.monotonic() after which no further candidate is started


def better(a: TestReport, b: TestReport, further: int = 0, spec: Collection[str] = ()) -> bool:
    """Strictly better: fewer failing tests in the `spec` files (generation's acceptance tests), then more
    passing, then fewer errors, then fewer failing, then the same tests failing further into themselves
    (`further` > 0, progress.py); never fewer tests without cause. So code that passes the acceptance
    tests is never traded for code that passes more of the tests written with it."""
    if a.total < b.total and a.errors == 0:
        return False  # tests went missing (they are read-only, but a conftest or a skip can hide them)
    return ((-spec_failing(a, spec), a.passed, -a.errors, -a.failed, min(further, 1))
            > (-spec_failing(b, spec), b.passed, -b.errors, -b.failed, 0))


def spec_failing(report: TestReport, spec: Collection[str]) -> int:
    """How many of the report's failing tests are in the `spec` files."""
    return sum(1 for f in report.failures if spec and f.test_id.split("::", 1)[0] in spec)


async def run_round(
    inputs: RoundInputs, approach: Approach, copy: WorkingCopy, report: TestReport, events: EventSink
) -> RoundResult:
    """The round: its events to `events` (not stamped: the caller's sink stamps them), its RoundResult returned."""
    this = _Round(inputs, approach, copy, report)
    try:
        await this.candidates(events)
    finally:  # a green candidate (or a cancelled round) stops the tests still running
        await this.cancel_pending()
    return await this.result()


class _Round:
    """One round's candidates as they are asked, read and tested, and what they gave."""

    def __init__(self, inputs: RoundInputs, approach: Approach, copy: WorkingCopy, report: TestReport) -> None:
        self.inputs, self.approach, self.copy, self.report = inputs, approach, copy, report
        self.failing = [f.test_id for f in report.failures]
        # a file that did not load has no test id to select it by (pytest names it `file::module`): all run
        uncollected = any(f.kind == "error" and f.message == COLLECTION_ERROR for f in report.failures)
        self.subset = inputs.subset and bool(self.failing) and all("::" in t for t in self.failing) and not uncollected
        self.form = approach.form
        self.count = self.form.count(approach, inputs.count)
        self.start = copy.code_fingerprint()  # by syntax tree, like every fingerprint of a change tested
        self.limit = self.form.reply_limit(approach, copy, inputs.llm.settings.max_tokens)  # one target per round
        self.tried: list[Tried] = []
        self.kept: dict[int, tuple[WorkingCopy, TestReport, int]] = {}  # index -> (fork, its tests, tokens)
        self.environment: dict[int, Environment] = {}  # index -> (packages, commands, installs)
        self.fingerprints: dict[int, int] = {}
        self.ended: Ended = "nothing_better"
        self.testing: list[Testing] = []  # candidates being tested, in the order asked (one per free sandbox)
        self.envs = CandidateEnvironments(inputs.sandbox)  # a candidate's install reaches no other candidate
        self.overflowed = False  # the request is longer than the model's window
        self.asks = RoundAsks(inputs.llm, inputs.messages, inputs.next_seed, _asking(approach, copy), self.limit)

    async def candidates(self, events: EventSink) -> None:
        """Ask, read and test candidates until one is green, the budget or the form says stop."""
        for index in range(1, self.count + 1):
            await self._finished(events, all_of_them=False)
            if self.ended == "green" or self._stopped():
                break
            asked = self.form.variant(self.approach, index, self.tried)
            if asked is None:
                break
            self.asks.send_ahead(index, self.count, self._temperature)
            await self._candidate(index, asked, events)
            if self.overflowed:  # every candidate of the round sends this prompt: none would fit
                break
        await self._finished(events, all_of_them=True)

    def _stopped(self) -> bool:
        if self.inputs.over_budget() is not None:
            self.ended = "budget"
            return True
        return self.inputs.deadline is not None and time.monotonic() > self.inputs.deadline  # the small edits' time

    async def _finished(self, events: EventSink, all_of_them: bool) -> None:
        """The tested candidates' events, oldest first: while no sandbox is free, or each that is done (all of
        them at the end); none after a green."""
        inputs, testing = self.inputs, self.testing
        while testing and self.ended != "green" and (all_of_them or len(testing) >= inputs.sandbox.workers
                                                      or testing[0].task.done() or self.envs.changed):
            done = await _finish(testing.pop(0), self.tried, self.kept, self.copy, self.report)
            events.emit(_tested_event(inputs, self.approach, done, self.kept[done.index][2]))
            if done.green:
                self.ended = "green"

    async def _candidate(self, index: int, asked: Approach, events: EventSink) -> None:
        """One candidate asked (or given) and read; a change is put to the test, a rejected reply recorded."""
        inputs, approach, form = self.inputs, self.approach, self.form
        given = form.given(approach, index)  # a reply known before the round: asked of no model
        sent = self.asks.take(index)
        if sent is not None:
            seed, temperature = sent.seed, sent.temperature
        else:
            seed = None if given is not None else inputs.next_seed()
            temperature = 0.0 if given is not None else self._temperature(index)
        events.emit(CandidateAsked(iteration=inputs.iteration, index=index, of=self.count, route=approach.route,
                                   target=asked.label, seed=seed, temperature=temperature))
        tokens = 0  # of this candidate's own calls (others of the round may be out at once)
        await self.envs.before(form.changes_environment)
        reply = given or ""
        if form.asks_model and given is None:
            try:
                answer = await (sent.reply if sent is not None else self.asks.ask(seed, temperature))
                reply, tokens = answer.text, answer.tokens
            except ContextOverflow as exc:
                self.overflowed = True
                self.tried.append(Tried(index, seed, temperature, "rejected",
                                        reason=f"the request is too long: {exc}"))
                events.emit(_tested_event(inputs, approach, self.tried[-1], 0))
                return
        fork, reason, self.environment[index], fingerprint, again, unchanged = await _read(
            inputs, asked, self.copy, self.report, reply, self.start, self.fingerprints, self.tried)
        if again:  # a change already tested: asked once for a different one
            follow = [*inputs.messages, {"role": "assistant", "content": reply}, {"role": "user", "content": again}]
            try:
                again_answer = await self.asks.ask(seed, temperature, follow)
                more, tokens = again_answer.text, tokens + again_answer.tokens
            except ContextOverflow:
                more = ""
            first = reason
            fork, reason, self.environment[index], fingerprint, _, _ = await _read(
                inputs, approach, self.copy, self.report, more, self.start, self.fingerprints, self.tried)
            reason = f"{first}; asked again: {reason}" if reason else ""
        for note in inputs.llm.take_notes():  # fewer requests at once than asked: said in the run
            events.emit(Message(text=note, level="warning"))
        await self.envs.applied(index, self.environment[index][:2] != ((), ()))
        if reason:
            self.tried.append(Tried(index, seed, temperature, "rejected", reason=reason, unchanged=unchanged))
            events.emit(_tested_event(inputs, approach, self.tried[-1], tokens))
            return
        self.fingerprints[fingerprint] = index
        diff, lines = _diff(self.copy, fork)
        tests = _test_candidate(inputs, fork, self.failing, self.subset, self.report)
        self.testing.append(Testing(Tried(index, seed, temperature, "tested", diff=diff, diff_lines=lines,
                                          change_kind=approach.kind_of(index)), fork, tokens,
                                    asyncio.ensure_future(tests)))

    def _temperature(self, index: int) -> float:
        return _temperature(index, self.inputs.temperature, self.approach.hotter)

    async def cancel_pending(self) -> None:
        await self.asks.cancel()  # requests sent ahead that no candidate read
        for pending in self.testing:
            pending.task.cancel()
        if self.testing:
            await asyncio.gather(*(pending.task for pending in self.testing), return_exceptions=True)

    async def result(self) -> RoundResult:
        """The round's result: its best candidate, which the state moves to only when it is green or better."""
        approach, tried, ended, report = self.approach, self.tried, self.ended, self.report
        tried.sort(key=lambda t: t.index)
        feedback = {t.index: t.feedback for t in tried}  # a candidate whose tests were cancelled gave none
        gave = MappingProxyType({fp: feedback[i] for fp, i in self.fingerprints.items() if i in feedback})
        tested = [t for t in tried if t.status == "tested"]
        if not tested:
            await self.envs.to_state()
            return RoundResult(approach, tuple(tried), None, "budget" if ended == "budget" else "no_candidates",
                               tested=gave)
        best = max(tested, key=lambda t: (t.green, t.passed, -t.errors, -t.failed, t.further, -t.diff_lines))
        fork, result, _ = self.kept[best.index]
        packages, commands, installs = self.environment.get(best.index, ((), (), ()))
        await self.envs.to_candidate(best.index)  # the state moves to it, or its whole suite runs on it
        if ended == "green":
            return RoundResult(approach, tuple(tried), best, "green", result, fork.files(), packages, commands,
                               installs, gave)
        full: TestReport | None = result if best.scope == "all" else None
        if full is None and (best.passed > 0 or best.errors < _errors(report, self.failing) or best.further > 0):
            full, _ = await _test(self.inputs, fork, None, state=report)  # worth a whole-suite run: it may be better
        # a small edit is taken only for more tests passing (one too few or too many steps in may look like progress)
        gains = not approach.form.more_passing_only or (full is not None and full.passed > report.passed)
        if gains and full is not None and full.total and better(full, report, _further(full, report, self.copy, fork),
                                                                self.inputs.tests.spec):
            return RoundResult(approach, tuple(tried), best, "green" if full.green else "better", full,
                               fork.files(), packages, commands, installs, gave)
        await self.envs.to_state()
        return RoundResult(approach, tuple(tried), best, "budget" if ended == "budget" else "nothing_better", full,
                           tested=gave)


async def _read(
    inputs: RoundInputs, approach: Approach, copy: WorkingCopy, report: TestReport, reply: str, start: int,
    fingerprints: dict[int, int], tried: list[Tried],
) -> tuple[WorkingCopy, str, Environment, int, str, bool]:
    """A reply applied to a fork: (fork, why it is rejected or "", its installs and commands, fingerprint,
    what to ask the model once more when the reply is the file's code or a change already tested,
    whether the reply is the file's code)."""
    fork = copy.fork()
    environment: Environment = ((), (), ())
    reason, unchanged = "", False
    try:
        plan = read_reply(approach, copy, reply, inputs.tests.is_test)
        applied = await apply_plan(plan, fork, inputs.sandbox, inputs.iteration, report.failures, inputs.tests,
                                   module=approach.form.module(approach))
        reason = applied.problems[0].removeprefix("- ").split("\nCurrent content")[0] if applied.problems else ""
        environment = (tuple(applied.packages), tuple(applied.commands), tuple(applied.installs))
    except ReplyUnchanged as exc:
        reason, unchanged = str(exc), True
    except ReplyRejected as exc:
        reason = str(exc)
    fingerprint = fork.code_fingerprint()  # a change written otherwise (same syntax trees) is the same change
    if environment[:2] != ((), ()):  # an install changes no file: what it installed tells two installs apart
        fingerprint = hash((fingerprint, environment[:2]))
    if not reason and fingerprint == start and approach.form.changes_files:
        reason, unchanged = "it changes nothing", True
    again = ""
    what = approach.form.asked_for(approach)  # "" when the form asks nothing again
    # an echo of the code is not asked again: asked, the model echoed it again every time (ablation_reasks.py)
    if not reason and (same := _same_as(fingerprint, fingerprints, inputs.seen)):
        reason = same
        earlier = next((t.feedback for t in tried if t.index == fingerprints.get(fingerprint)), "")
        gave = earlier or inputs.seen.get(fingerprint, "")
        if what:
            again = TRIED_BEFORE.format(what=what, failure=gave or "they still failed")
    return fork, reason, environment, fingerprint, again, unchanged


def _asking(approach: Approach, copy: WorkingCopy) -> Asking:
    form = approach.form
    return Asking(step="repair_test" if approach.test else f"repair_{approach.route}", please=form.please(approach),
                  echoes=lambda so_far: form.known_echo(approach, copy, so_far),
                  given=lambda index: form.given(approach, index) is not None, asks_model=form.asks_model)


def _temperature(index: int, hot: float, hotter: float) -> float:
    if index == 1:
        return round(min(1.0, hotter), 3)  # greedy, unless the approach asks for hotter sampling
    return round(min(1.0, hot + hotter), 3)


def _errors(report: TestReport, failing: list[str]) -> int:
    return sum(1 for f in report.failures if f.kind == "error" and f.test_id in failing)


def _same_as(fingerprint: int, this_round: dict[int, int], earlier: Mapping[int, str]) -> str:
    if fingerprint in this_round:
        return f"the same change as candidate {this_round[fingerprint]}"
    if fingerprint in earlier:
        return "the same change as a candidate of an earlier round"
    return ""


@dataclass
class Testing:
    """A candidate whose tests are running (in a sandbox of its own when the port holds several)."""

    tried: Tried  # without its test results yet
    fork: WorkingCopy
    tokens: int
    task: asyncio.Future[tuple[TestReport, Literal["failing", "all"]]]


async def _test_candidate(inputs: RoundInputs, fork: WorkingCopy, failing: list[str], subset: bool,
                          state: TestReport) -> tuple[TestReport, Literal["failing", "all"]]:
    """The failing tests first (when they can be selected), the whole suite when they pass; one sandbox.
    Each run stops once it can no longer beat the state (case_times.early_stop)."""
    async with inputs.sandbox.lease() as sandbox:
        result, scope = await _test(inputs, fork, failing if subset else None, sandbox, state)
        if scope == "failing" and result.failures == [] and result.passed > 0:
            result, scope = await _test(inputs, fork, None, sandbox, state)  # the failing tests pass: the whole suite
        return result, scope


async def _finish(testing: Testing, tried: list[Tried], kept: dict[int, tuple[WorkingCopy, TestReport, int]],
                  start: WorkingCopy, state: TestReport) -> Tried:
    """Wait for a candidate's tests and record what they gave."""
    result, scope = await testing.task
    done = replace(testing.tried, scope=scope, passed=result.passed, failed=result.failed, errors=result.errors,
                   green=scope == "all" and result.green, feedback=_feedback(result),
                   further=_further(result, state, start, testing.fork))
    tried.append(done)
    kept[done.index] = (testing.fork, result, testing.tokens)
    return done


async def _test(inputs: RoundInputs, fork: WorkingCopy, ids: list[str] | None, sandbox: SandboxPort | None = None,
                state: TestReport | None = None) -> tuple[TestReport, Literal["failing", "all"]]:
    sandbox = sandbox or inputs.sandbox
    await sandbox.sync(fork.files(), fork.deleted())
    stop = early_stop(state, whole=not ids) if state is not None else None
    report = await sandbox.run_tests(ids or inputs.suite, timeout=inputs.test_timeout, stop=stop)
    return report, ("failing" if ids else "all")


def _further(result: TestReport, state: TestReport, start: WorkingCopy, fork: WorkingCopy) -> int:
    """How much further the candidate's failing tests got than the state's, in the start's lines."""
    files = {f.file for f in result.failures if f.file}
    before = {p: text for p in files if (text := start.read(p)) is not None}
    after = {p: text for p in files if (text := fork.read(p)) is not None}
    return further(result, reached(result, before, after), state, reached(state))


def _diff(before: WorkingCopy, after: WorkingCopy) -> tuple[str, int]:
    """A unified diff of the fork against the round's starting state, and its count of changed lines."""
    out: list[str] = []
    for path in sorted(set(before.paths()) | set(after.paths())):
        old, new = before.read(path), after.read(path)
        if old == new:
            continue
        out.extend(difflib.unified_diff((old or "").splitlines(keepends=True), (new or "").splitlines(keepends=True),
                                        fromfile=f"a/{path}", tofile=f"b/{path}"))
    text = "".join(line if line.endswith("\n") else line + "\n" for line in out)
    changed = sum(1 for line in out if line[:1] in "+-" and not line.startswith(("+++", "---")))
    return text, changed


def _feedback(report: TestReport) -> str:
    """The first failure of a candidate's run, short: what the next round is told this attempt gave."""
    if not report.failures:
        return report.summary()
    first = report.failures[0]
    message = " ".join(tidy(first.message).split())[:300]  # no object addresses: the same failure, the same words
    return f"{report.summary()}; {first.test_id}: {message}"


def _tested_event(inputs: RoundInputs, approach: Approach, tried: Tried, tokens: int) -> CandidateTested:
    return CandidateTested(
        iteration=inputs.iteration, index=tried.index, route=approach.route, target=approach.label,
        seed=tried.seed, temperature=tried.temperature, prompt_hash=prompt_hash(inputs.messages),
        status=tried.status, reason=tried.reason, diff=tried.diff, scope=tried.scope, passed=tried.passed,
        failed=tried.failed, errors=tried.errors, green=tried.green, tokens=tokens,
        change_kind=tried.change_kind or approach.kind_of(tried.index),
    )
