"""One round: ask for N candidates, test each on its own fork of the working copy, keep the best.

Candidates are asked one after another with the same messages (the server's prompt cache reads
the prompt once), each with its own seed: the first greedy, the rest hotter. Each candidate is
applied to a fork and run in the warm sandbox, the failing tests first and the whole suite when
they pass; the round stops at the first candidate that turns everything green. When the sandbox port
holds several sandboxes (`sandbox.workers`), the next candidate is asked while earlier ones are tested,
each in a sandbox of its own; events still come in the order asked. The round ends in
a frozen `RoundResult`; the loop moves to its best candidate only when that is strictly better.
"""

from __future__ import annotations

import asyncio
import difflib
import time
from collections.abc import AsyncIterator, Callable, Mapping
from dataclasses import dataclass, field, replace
from types import MappingProxyType
from typing import Literal

from greenloop.agent.changes.actions import apply_plan
from greenloop.agent.changes.testfiles import TestFiles
from greenloop.agent.changes.working_copy import WorkingCopy
from greenloop.agent.events import CandidateAsked, CandidateTested, Event, InstalledPackage
from greenloop.agent.ports import SandboxPort
from greenloop.agent.prompting.material import tidy
from greenloop.agent.repair.approach import Approach, ReplyRejected, ReplyUnchanged, read_reply
from greenloop.agent.repair.check_statements import COLLECTION_ERROR
from greenloop.agent.repair.environments import CandidateEnvironments
from greenloop.agent.repair.progress import further, reached
from greenloop.agent.repair.prompts import prompt_hash
from greenloop.agent.repair.splice import has_code_block
from greenloop.llm import ContextOverflow, LLMClient
from greenloop_sandbox import TestReport
from greenloop_sandbox.case_times import early_stop

TRIED_BEFORE = ("That change was tested already, and the tests then said: {failure}\n"
                "Make a different change. Give the whole corrected {what} in one code block.")
Ended = Literal["green", "better", "nothing_better", "no_candidates", "budget"]
Environment = tuple[tuple[str, ...], tuple[str, ...], tuple[InstalledPackage, ...]]  # packages, commands, installs


@dataclass(frozen=True)
class Tried:
    """One candidate as the records keep it."""

    index: int
    seed: int | None
    temperature: float
    status: Literal["rejected", "tested"]
    reason: str = ""
    diff: str = ""
    diff_lines: int = 0
    scope: Literal["", "failing", "all"] = ""
    passed: int = 0
    failed: int = 0
    errors: int = 0
    green: bool = False
    further: int = 0  # its failing tests stopped later (> 0) or earlier (< 0) than the state's (progress.py)
    feedback: str = ""  # the test output, for the next round's prompt
    unchanged: bool = False  # the reply gave the code back as it was, and again when asked for a change
    change_kind: str = ""  # a small edit's kind or "model" (Approach.kind_of)


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


def better(a: TestReport, b: TestReport, further: int = 0) -> bool:
    """Strictly better: more passing, then fewer errors, then fewer failing, then the same tests failing
    further into themselves (`further` > 0, progress.py); never fewer tests without cause."""
    if a.total < b.total and a.errors == 0:
        return False  # tests went missing (they are read-only, but a conftest or a skip can hide them)
    return (a.passed, -a.errors, -a.failed, min(further, 1)) > (b.passed, -b.errors, -b.failed, 0)


async def run_round(
    inputs: RoundInputs, approach: Approach, copy: WorkingCopy, report: TestReport
) -> AsyncIterator[Event | RoundResult]:
    """Yield the round's events, then its RoundResult (always last)."""
    failing = [f.test_id for f in report.failures]
    # a file that did not load has no test id to select it by (pytest names it `file::module`): all run
    uncollected = any(f.kind == "error" and f.message == COLLECTION_ERROR for f in report.failures)
    subset = inputs.subset and bool(failing) and all("::" in t for t in failing) and not uncollected
    form = approach.form
    count = form.count(approach, inputs.count)
    start = copy.fingerprint()
    limit = form.reply_limit(approach, copy, inputs.llm.settings.max_tokens)  # one target per round
    tried: list[Tried] = []
    kept: dict[int, tuple[WorkingCopy, TestReport, int]] = {}  # index -> (fork, its tests, tokens)
    environment: dict[int, Environment] = {}  # index -> (packages, commands, installs)
    fingerprints: dict[int, int] = {}
    ended: Ended = "nothing_better"
    testing: list[Testing] = []  # candidates being tested, in the order asked (one per free sandbox)
    envs = CandidateEnvironments(inputs.sandbox)  # a candidate's install reaches no other candidate
    try:
        for index in range(1, count + 1):
            while len(testing) >= inputs.sandbox.workers or (testing and (testing[0].task.done() or envs.changed)):
                done = await _finish(testing.pop(0), tried, kept, copy, report)
                yield _tested_event(inputs, approach, done, kept[done.index][2])
                if done.green:
                    ended = "green"
                    break
            if ended == "green":
                break
            if inputs.over_budget() is not None:
                ended = "budget"
                break
            if inputs.deadline is not None and time.monotonic() > inputs.deadline:
                break  # the mutants' time is up: the model is asked next
            asked = form.variant(approach, index, tried)
            if asked is None:
                break
            given = form.given(approach, index)  # a reply known before the round: asked of no model
            seed = None if given is not None else inputs.next_seed()
            temperature = 0.0 if given is not None else _temperature(index, inputs.temperature, approach.hotter)
            yield CandidateAsked(iteration=inputs.iteration, index=index, of=count, route=approach.route,
                                 target=asked.label, seed=seed, temperature=temperature)
            used = _tokens(inputs.llm)
            await envs.before(form.changes_environment)
            reply = given or ""
            if form.asks_model and given is None:
                try:
                    reply = await _ask(inputs, approach, limit, seed, temperature)
                except ContextOverflow as exc:  # every candidate of the round sends this prompt: none would fit
                    tried.append(Tried(index, seed, temperature, "rejected", reason=f"the request is too long: {exc}"))
                    yield _tested_event(inputs, approach, tried[-1], 0)
                    break
            fork, reason, environment[index], fingerprint, again, unchanged = await _read(
                inputs, asked, copy, report, reply, start, fingerprints, tried)
            if again:  # a change already tested: asked once for a different one
                follow = [*inputs.messages, {"role": "assistant", "content": reply}, {"role": "user", "content": again}]
                try:
                    more = await _ask(inputs, approach, limit, seed, temperature, follow)
                except ContextOverflow:
                    more = ""
                first = reason
                fork, reason, environment[index], fingerprint, _, _ = await _read(
                    inputs, approach, copy, report, more, start, fingerprints, tried)
                reason = f"{first}; asked again: {reason}" if reason else ""
            await envs.applied(index, environment[index][:2] != ((), ()))
            tokens = _tokens(inputs.llm) - used
            if reason:
                tried.append(Tried(index, seed, temperature, "rejected", reason=reason, unchanged=unchanged))
                yield _tested_event(inputs, approach, tried[-1], tokens)
                continue
            fingerprints[fingerprint] = index
            diff, lines = _diff(copy, fork)
            testing.append(Testing(Tried(index, seed, temperature, "tested", diff=diff, diff_lines=lines,
                                         change_kind=approach.kind_of(index)), fork,
                                   tokens, asyncio.ensure_future(_test_candidate(inputs, fork, failing, subset, report))))
        while testing and ended != "green":
            done = await _finish(testing.pop(0), tried, kept, copy, report)
            yield _tested_event(inputs, approach, done, kept[done.index][2])
            ended = "green" if done.green else ended
    finally:  # a green candidate (or a cancelled round) stops the tests still running
        for pending in testing:
            pending.task.cancel()
        if testing:
            await asyncio.gather(*(pending.task for pending in testing), return_exceptions=True)
    tried.sort(key=lambda t: t.index)
    feedback = {t.index: t.feedback for t in tried}  # a candidate whose tests were cancelled gave none
    gave = MappingProxyType({fp: feedback[i] for fp, i in fingerprints.items() if i in feedback})
    tested = [t for t in tried if t.status == "tested"]
    if not tested:
        await envs.to_state()
        yield RoundResult(approach, tuple(tried), None, "budget" if ended == "budget" else "no_candidates", tested=gave)
        return
    best = max(tested, key=lambda t: (t.green, t.passed, -t.errors, -t.failed, t.further, -t.diff_lines))
    fork, result, _ = kept[best.index]
    packages, commands, installs = environment.get(best.index, ((), (), ()))
    await envs.to_candidate(best.index)  # the state moves to it, or its whole suite runs on it
    if ended == "green":
        yield RoundResult(approach, tuple(tried), best, "green", result, fork.files(), packages, commands, installs, gave)
        return
    full: TestReport | None = result if best.scope == "all" else None
    if full is None and (best.passed > 0 or best.errors < _errors(report, failing) or best.further > 0):
        full, _ = await _test(inputs, fork, None, state=report)  # worth a whole-suite run: it may be better
    # a small edit is taken only for more tests passing (one too few or too many steps in may look like progress)
    gains = not approach.form.more_passing_only or (full is not None and full.passed > report.passed)
    if gains and full is not None and full.total and better(full, report, _further(full, report, copy, fork)):
        yield RoundResult(approach, tuple(tried), best, "green" if full.green else "better", full, fork.files(),
                          packages, commands, installs, gave)
        return
    await envs.to_state()
    yield RoundResult(approach, tuple(tried), best, "budget" if ended == "budget" else "nothing_better", full,
                      tested=gave)


async def _ask(inputs: RoundInputs, approach: Approach, limit: int | None, seed: int | None,
               temperature: float, messages: list[dict[str, str]] | None = None) -> str:
    """One candidate's reply; a reply of prose alone is asked once for its code (the prefix is shared)."""
    step = "repair_test" if approach.test else f"repair_{approach.route}"
    messages = messages or inputs.messages
    reply = await inputs.llm.complete(messages, step=step, max_tokens=limit, seed=seed, temperature=temperature)
    please = approach.form.please(approach)
    if please and not has_code_block(reply) and reply.strip():
        # the 1.5B model said what was wrong and stopped; asked for the code, it gives it
        follow = [*messages, {"role": "assistant", "content": reply}, {"role": "user", "content": please}]
        more = await inputs.llm.complete(follow, step=step, max_tokens=limit, seed=seed, temperature=temperature)
        reply = f"{reply}\n{more}"
    return reply


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
    fingerprint = fork.fingerprint()
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


def _tokens(llm: LLMClient) -> int:
    return int(llm.usage.prompt_tokens + llm.usage.completion_tokens)


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
