"""The test-fix loop: run tests, find the code, diagnose, plan, apply to the working copy, rerun."""

from __future__ import annotations

import secrets
import time
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

from greenloop.agent.changes.actions import ApplyOutcome, apply_plan
from greenloop.agent.changes.testfiles import TestFiles
from greenloop.agent.changes.working_copy import WorkingCopy
from greenloop.agent.events import (
    BudgetUsed,
    Diagnosis,
    DiagnosisDelta,
    Done,
    Event,
    IterationStarted,
    LocationsFound,
    Message,
    Outcome,
    PlanMade,
    TestsRan,
)
from greenloop.agent.orchestration.best import BestState
from greenloop.agent.orchestration.budget import Budget
from greenloop.agent.orchestration.history import (
    Attempt,
    History,
    describe_action,
    failure_signature,
    plan_signature,
)
from greenloop.agent.orchestration.rewrite import rewritable, rewrite
from greenloop.agent.plan import DebugPlan
from greenloop.agent.ports import Ports
from greenloop.agent.prompting.context import ContextBuilder, focus_text, render_failures
from greenloop.agent.prompting.files import render_prompt
from greenloop.agent.repair.rounds import candidate_rounds
from greenloop.llm import ContextOverflow, LLMError, StructuredOutputError
from greenloop.settings import Settings
from greenloop_sandbox import TestReport

OFFERED = ("green", "no_tests")  # outcomes whose change set is offered to the person (tested and passing)
EDIT_REPAIRS = 2  # rounds per iteration in which rejected actions go back to the model
INVALID_PLANS_IN_A_ROW = 2  # then the loop ends with an error
# The diagnosis is one paragraph; see docs/decisions/2026-11-plan-strategy-loop.md.
DIAGNOSIS_TOKENS = 512
# The plan is told to summarise, not copy, the diagnosis (docs/decisions/2026-11-plan-strategy-loop.md).
DIAGNOSIS_SECTION = (
    "\n## Diagnosis (from the step before this one)\n{text}\n\n"
    'Act on it. In your JSON, "diagnosis" is one sentence: do not copy the text above.\n'
)

# A generated project's tests may be wrong; see docs/decisions/2026-11-generation-pipeline.md.
GOAL_SECTION = (
    "\n## What the project is for\n{goal}\n\n"
    "The tests were written together with the code, from this request. Where a test expects "
    "something the request does not ask for (a wrong expected value), fix the test instead.\n"
)


@dataclass
class Focus:
    path: str
    start_line: int
    end_line: int


@dataclass
class LoopContext:
    """Everything one run's loop needs; created by the session, shared with generation."""

    settings: Settings
    ports: Ports
    workspace: Path
    template: str
    run_id: str
    budget: Budget = field(init=False)
    history: History = field(default_factory=History)
    contexts: ContextBuilder = field(init=False)
    packages: list[str] = field(default_factory=list)
    commands: list[str] = field(default_factory=list)
    started: float = field(default_factory=time.monotonic)
    goal: str = ""  # a generated project's request: its tests are the model's too, and may be wrong
    tests_writable: bool = False  # generation's own tests, an improve request about tests, loop.edit_tests
    _seeds: int = 0

    def __post_init__(self) -> None:
        self.budget = Budget(self.settings.loop)
        r = self.settings.retrieval
        coverage = partial(self.ports.sandbox.run_spectrum, seconds=r.coverage_seconds) if r.coverage else None
        self.contexts = ContextBuilder(use_retrieval=r.enabled, budget_tokens=r.context_tokens, top_k=r.top_k,
                                       coverage=coverage)
        self._seed_base = self.settings.llm.seed if self.settings.llm.seed is not None else secrets.randbelow(2**31)

    @property
    def tests(self) -> TestFiles:
        """Which files are tests, and whether this run may change them."""
        writable = self.tests_writable or self.settings.loop.edit_tests
        return TestFiles.of(self.ports.sandbox.template.language.test_globs, self.settings.loop.test_paths, writable=writable)

    def next_seed(self) -> int:
        """A seed no other call of this run has used (candidates are sampled apart, and recorded)."""
        self._seeds += 1
        return self._seed_base + 1000 + self._seeds

    def stamp(self, event: Any) -> Any:
        event.run_id, event.at = self.run_id, round(time.monotonic() - self.started, 3)
        return event

    def tokens(self) -> int:
        usage = self.ports.llm.usage
        return int(usage.prompt_tokens + usage.completion_tokens)

    def over_budget(self) -> str | None:
        return self.budget.exceeded(tokens=self.tokens(), cost=float(self.ports.llm.usage.cost))

    def budget_event(self, iteration: int) -> BudgetUsed:
        u = self.ports.llm.usage
        return self.stamp(
            BudgetUsed(
                iteration=iteration,
                prompt_tokens=u.prompt_tokens,
                completion_tokens=u.completion_tokens,
                cost=u.cost,
                seconds=round(self.budget.elapsed(), 3),
                calls=u.calls,
            )
        )

    def done(self, copy: WorkingCopy, outcome: Outcome, summary: str, iterations: int, evidence: str = "") -> Done:
        u = self.ports.llm.usage
        changes = copy.changes(self.packages, self.commands)
        return self.stamp(
            Done(
                outcome=outcome,
                summary=summary,
                iterations=iterations,
                changes=changes,
                offers_changes=outcome in OFFERED and bool(changes.files or changes.packages or changes.commands),
                prompt_tokens=u.prompt_tokens,
                completion_tokens=u.completion_tokens,
                cost=u.cost,
                seconds=round(self.budget.elapsed(), 3),
                evidence=evidence,
            )
        )


async def run_tests_on(ctx: LoopContext, copy: WorkingCopy, test_ids: list[str] | None) -> TestReport:
    """Sync the working copy into the sandbox (changed files only) and run the tests."""
    await ctx.ports.sandbox.sync(copy.files(), copy.deleted())
    return await ctx.ports.sandbox.run_tests(test_ids, timeout=ctx.settings.sandbox.test_timeout)


def tests_ran(ctx: LoopContext, iteration: int, report: TestReport) -> TestsRan:
    return ctx.stamp(
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


async def fix_loop(
    ctx: LoopContext,
    copy: WorkingCopy,
    *,
    test_ids: list[str] | None = None,
    instruction: str | None = None,
    focus: Focus | None = None,
) -> AsyncIterator[Event]:
    """Yield the loop's events, ending with exactly one Done."""
    report = await run_tests_on(ctx, copy, test_ids)
    yield tests_ran(ctx, 0, report)
    if report.total == 0 and not report.failures and not instruction:
        yield ctx.done(copy, "no_tests", _no_tests_message(report), 0)
        return
    if report.green and not instruction:
        yield ctx.done(copy, "already_green", f"The tests already pass ({report.summary()}); nothing changed.", 0)
        return
    if instruction is None and ctx.settings.loop.strategy != "plan":
        async for event in candidate_rounds(ctx, copy, report, test_ids):
            yield event
        return
    async for event in _iterations(ctx, copy, report, test_ids, instruction, focus):
        yield event


async def _iterations(
    ctx: LoopContext,
    copy: WorkingCopy,
    report: TestReport,
    test_ids: list[str] | None,
    instruction: str | None,
    focus: Focus | None,
) -> AsyncIterator[Event]:
    max_it = ctx.settings.loop.max_iterations
    invalid_in_a_row = 0
    instruction_done = instruction is None
    best = BestState()  # a run that ends red leaves its best state (an improve run: once its change is made)
    if instruction_done:
        best.offer(report, copy, 0)

    def stop(outcome: Outcome, summary: str, iterations: int, evidence: str = "", tests: bool = False) -> Iterator[Event]:
        kept, note = best.keep(copy, report)
        if note:
            yield ctx.stamp(Message(text=note, level="warning"))
        summary = f"{summary}; {kept.summary()}." if tests else summary
        yield ctx.done(copy, outcome, summary, iterations, evidence)

    for iteration in range(1, max_it + 1):
        if (why := ctx.over_budget()) is not None:
            for event in stop("budget", f"Stopped: {why}.", iteration - 1, why):
                yield event
            return
        yield ctx.stamp(IterationStarted(iteration=iteration, max_iterations=max_it))
        step = _Step(ctx, copy, report, iteration, instruction, focus, instruction_done)
        before = copy.files()
        try:
            async for event in step.run():
                yield event
        except LLMError as exc:  # the model server failed for good: what the run reached is kept
            copy.restore(before)  # this iteration's changes were never tested
            yield ctx.stamp(Message(text=f"The model call failed: {exc}", level="error"))
            summary = f"Stopped in iteration {iteration}: the model call failed"
            for event in stop("error", summary, iteration - 1, str(exc), tests=True):
                yield event
            return
        if step.stuck is not None:
            for event in stop("stuck", "Stopped: the model repeats an attempt that did not work.", iteration, step.stuck):
                yield event
            return
        invalid_in_a_row = invalid_in_a_row + 1 if step.plan is None else 0
        if invalid_in_a_row >= INVALID_PLANS_IN_A_ROW:
            msg = "The model did not return a valid plan; nothing was changed by this iteration."
            for event in stop("error", msg, iteration, step.error):
                yield event
            return
        fixing = instruction_done  # not carrying out a request (which may be to remove tests)
        instruction_done = instruction_done or step.changed_files
        undone = ""
        if step.changed:
            rerun = await run_tests_on(ctx, copy, test_ids)
            yield tests_ran(ctx, iteration, rerun)
            undone = _tests_lost(report, rerun) if fixing else ""
            if undone:  # the files go back; the earlier report still says what fails
                copy.restore(before)
                yield ctx.stamp(Message(text=f"Iteration {iteration}'s change was undone: {undone}.", level="warning"))
            else:
                report = rerun
                if instruction_done:
                    best.offer(report, copy, iteration)
        step.record_outcome(report, undone)
        yield ctx.budget_event(iteration)
        if instruction_done and (report.green or (report.total == 0 and instruction)):
            yield ctx.done(copy, *_success(report, instruction), iteration)
            return
    for event in stop("budget", f"Stopped after {max_it} iterations", max_it, "max iterations reached", tests=True):
        yield event


def _tests_lost(before: TestReport, after: TestReport) -> str:
    """Why a rerun counts as tests removed, not fixed ("" when it does not).

    Fewer tests ran and no error explains it: the change deleted or disabled tests
    (Qwen2.5-Coder 0.5B rewrote a failing test file into one with no tests, and the
    loop then saw "0 failed"). A collection error is left to the next iteration.
    """
    if after.total >= before.total or after.errors > 0:
        return ""
    return (
        f"fewer tests ran ({before.total} -> {after.total}); make the tests pass by fixing the code, "
        "not by removing or disabling tests"
    )


def _success(report: TestReport, instruction: str | None) -> tuple[Outcome, str]:
    if report.total == 0:
        return "no_tests", "Change made; the project has no tests to check it."
    what = "Change made and the tests pass" if instruction else "The tests pass"
    return "green", f"{what} ({report.summary()})."


def _no_tests_message(report: TestReport) -> str:
    tail = report.raw.strip().splitlines()[-5:]
    return "No tests were found in this workspace; there is nothing to fix." + (
        "\nTest command output:\n" + "\n".join(tail) if tail else ""
    )


class _Step:
    """One iteration's model work: context, diagnosis, plan, apply (with edit repairs)."""

    def __init__(
        self,
        ctx: LoopContext,
        copy: WorkingCopy,
        report: TestReport,
        iteration: int,
        instruction: str | None,
        focus: Focus | None,
        instruction_done: bool,
    ) -> None:
        self.ctx, self.copy, self.report, self.iteration = ctx, copy, report, iteration
        self.instruction, self.focus, self.instruction_done = instruction, focus, instruction_done
        self.plan: DebugPlan | None = None
        self.stuck: str | None = None
        self.error = ""
        self.changed = False
        self.changed_files = False
        self.attempt = Attempt(iteration=iteration, failing=_failing_line(report), diagnosis="", actions=[])
        self._before = copy.fingerprint()

    async def run(self) -> AsyncIterator[Event]:
        ctx = self.ctx
        code = await ctx.contexts.build(self.copy, self.report.failures)
        locations = [loc.to_json() for loc in code.locations]
        yield ctx.stamp(LocationsFound(iteration=self.iteration, locations=locations, context_tokens=code.tokens))
        values = self._prompt_values(code.text)
        if ctx.settings.loop.diagnosis and self.instruction_done:
            async for event in self._diagnose(values):
                yield event
        messages = self._plan_messages(values)
        async for event in self._plan_and_apply(messages):
            yield event

    def _prompt_values(self, code_text: str) -> dict[str, str]:
        history = self.ctx.history.render() if self.ctx.settings.loop.history else ""
        instruction = ""
        if self.instruction and self.instruction_done:
            instruction = f"\n## The person's request (keep it done while fixing)\n{self.instruction}\n"
        elif self.ctx.goal:
            instruction = GOAL_SECTION.format(goal=self.ctx.goal)
        focus = ""
        if self.focus is not None:
            focus = focus_text(self.copy, self.focus.path, self.focus.start_line, self.focus.end_line)
        return {
            "template": self.ctx.template,
            "failures": render_failures(self.report),
            "context": code_text,
            "history": history,
            "instruction": instruction,
            "focus": focus or "(no specific code was selected)",
            "diagnosis": "",
        }

    async def _diagnose(self, values: dict[str, str]) -> AsyncIterator[Event]:
        messages = _messages(self.ctx, render_prompt("diagnose", self.ctx.workspace, **values))
        parts: list[str] = []
        limit = min(DIAGNOSIS_TOKENS, self.ctx.settings.llm.max_tokens)
        async for delta in self.ctx.ports.llm.stream(messages, step="diagnosis", max_tokens=limit):
            parts.append(delta)
            yield self.ctx.stamp(DiagnosisDelta(iteration=self.iteration, text=delta))
        text = "".join(parts).strip()
        self.attempt.diagnosis = text
        values["diagnosis"] = DIAGNOSIS_SECTION.format(text=text) if text else ""
        yield self.ctx.stamp(Diagnosis(iteration=self.iteration, text=text))

    def _plan_messages(self, values: dict[str, str]) -> list[dict[str, str]]:
        if self.instruction and not self.instruction_done:
            values = {**values, "instruction": self.instruction}
            return _messages(self.ctx, render_prompt("improve", self.ctx.workspace, **values))
        return _messages(self.ctx, render_prompt("plan", self.ctx.workspace, **values))

    async def _plan_and_apply(self, messages: list[dict[str, str]]) -> AsyncIterator[Event]:
        ctx = self.ctx
        rejected = ""  # signature of the plan the last repair request was about
        outcome = ApplyOutcome()
        for round_ in range(EDIT_REPAIRS + 1):
            try:
                plan = await ctx.ports.llm.structured(messages, DebugPlan, step="debug_plan", attempt=round_)
            except ContextOverflow:
                if round_ == 0:
                    raise
                # a 201-line test file shown with the repair took the embedded model past its 8,192 tokens
                yield ctx.stamp(Message(text="The repair request would not fit the model's context window; "
                                             "no more repairs in this iteration.", level="warning"))
                return
            except StructuredOutputError as exc:
                self.error = str(exc)
                self.attempt.actions.append("(no valid plan)")
                yield ctx.stamp(Message(text=f"The model's plan was not valid: {exc}", level="warning"))
                return
            if plan_signature(plan) == rejected:  # asked to repair, it sent the same actions back
                yield ctx.stamp(Message(text="The model sent the rejected actions back unchanged; "
                                             "no more repairs in this iteration.", level="warning"))
                async for event in self._rewrite(outcome):
                    yield event
                return
            if round_ == 0:
                self.plan = plan
                self.attempt.diagnosis = self.attempt.diagnosis or plan.diagnosis
                earlier = ctx.history.repeat_of(failure_signature(self.report), plan_signature(plan), self.iteration)
                if earlier is not None:
                    self.stuck = self._stuck_evidence(earlier, plan)
                    yield ctx.stamp(PlanMade(iteration=self.iteration, plan=plan))
                    return
            yield ctx.stamp(PlanMade(iteration=self.iteration, plan=plan))
            outcome = await apply_plan(plan, self.copy, ctx.ports.sandbox, self.iteration, self.report.failures,
                                       ctx.tests)
            self._absorb(plan, outcome)
            for event in outcome.events:
                yield ctx.stamp(event)
            if not outcome.problems or (ctx.over_budget() is not None):
                return
            if round_ == EDIT_REPAIRS:
                async for event in self._rewrite(outcome):
                    yield event
                return
            problems = "\n".join(outcome.problems)
            rejected = plan_signature(plan)
            messages = [
                *messages,
                {"role": "assistant", "content": plan.model_dump_json()},
                {"role": "user", "content": render_prompt("edit_repair", ctx.workspace, problems=problems)},
            ]

    async def _rewrite(self, outcome: ApplyOutcome) -> AsyncIterator[Event]:
        """The small files whose edits still miss, written whole by the model (`loop.rewrite_lines`)."""
        ctx = self.ctx
        limit = ctx.settings.loop.rewrite_lines
        files = rewritable(outcome, self.copy, limit) if limit else {}
        diagnosis = self.attempt.diagnosis.strip()
        values = {"template": ctx.template, "failures": render_failures(self.report),
                  "diagnosis": f"\n## Diagnosis\n{diagnosis}\n" if diagnosis else ""}
        for path, problems in files.items():
            if ctx.over_budget() is not None:
                return
            yield ctx.stamp(Message(text=f"The edits to {path} did not apply; asking for the whole file."))
            try:
                action = await rewrite(ctx.ports.llm, self.copy, ctx.workspace, path, problems, values)
            except ContextOverflow:
                yield ctx.stamp(Message(text=f"The whole of {path} would not fit the model's context window; "
                                             "it is not rewritten.", level="warning"))
                continue
            if isinstance(action, str):
                yield ctx.stamp(Message(text=f"The model's rewrite of {path} was not usable: {action}.",
                                        level="warning"))
                continue
            plan = DebugPlan(diagnosis=f"The whole of {path}, written again.", actions=[action])
            yield ctx.stamp(PlanMade(iteration=self.iteration, plan=plan))
            applied = await apply_plan(plan, self.copy, ctx.ports.sandbox, self.iteration, tests=ctx.tests)
            self._absorb(plan, applied)
            for event in applied.events:
                yield ctx.stamp(event)

    def _absorb(self, plan: DebugPlan, outcome: ApplyOutcome) -> None:
        self.attempt.actions.extend(describe_action(a) for a in plan.actions)
        self.ctx.packages.extend(p for p in outcome.packages if p not in self.ctx.packages)
        self.ctx.commands.extend(outcome.commands)
        if outcome.problems:
            self.attempt.outcome = f"{len(outcome.problems)} action(s) rejected: " + "; ".join(
                p.splitlines()[0][:160] for p in outcome.problems
            )
        self.changed_files = self.changed_files or self.copy.fingerprint() != self._before
        self.changed = self.changed or self.changed_files or bool(outcome.packages or outcome.commands)

    def _stuck_evidence(self, earlier: int, plan: DebugPlan) -> str:
        actions = "; ".join(describe_action(a) for a in plan.actions) or "(no actions)"
        return (
            f"Iteration {self.iteration} saw the same failure as iteration {earlier} "
            f"({_failing_line(self.report)}) and proposed the same plan again: {actions}"
        )

    def record_outcome(self, report: TestReport, undone: str = "") -> None:
        if undone:
            self.attempt.outcome = (self.attempt.outcome + "; " if self.attempt.outcome else "") + f"undone: {undone}"
        elif not self.changed:
            self.attempt.outcome = (self.attempt.outcome + "; " if self.attempt.outcome else "") + "nothing changed"
        else:
            self.attempt.outcome = (self.attempt.outcome + "; " if self.attempt.outcome else "") + (
                f"tests then: {report.summary()}" + (f" ({_failing_line(report)})" if report.failures else "")
            )
        self.ctx.history.add(self.attempt)


def _messages(ctx: LoopContext, user: str) -> list[dict[str, str]]:
    return [{"role": "system", "content": render_prompt("system", ctx.workspace)}, {"role": "user", "content": user}]


def _failing_line(report: TestReport) -> str:
    if not report.failures:
        return report.summary()
    first = report.failures[0]
    msg = (first.message or "").strip().splitlines()[:1]
    more = f" and {len(report.failures) - 1} more" if len(report.failures) > 1 else ""
    return f"{first.test_id}: {msg[0][:160] if msg else 'failed'}{more}"

