"""The test-fix loop: run tests, find the code, diagnose, plan, apply to the working copy, rerun."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass

from greenloop.agent.changes.actions import ApplyOutcome, apply_plan
from greenloop.agent.changes.working_copy import WorkingCopy
from greenloop.agent.events import (
    Diagnosis,
    DiagnosisDelta,
    Event,
    IterationStarted,
    LocationsFound,
    Message,
    Outcome,
    PlanMade,
    TestsRan,
)
from greenloop.agent.orchestration.best import BestState
from greenloop.agent.orchestration.history import (
    Attempt,
    describe_action,
    failure_signature,
    plan_signature,
)
from greenloop.agent.orchestration.rewrite import rewritable, rewrite
from greenloop.agent.orchestration.run_state import RunState
from greenloop.agent.plan import DebugPlan
from greenloop.agent.prompting.files import render_prompt
from greenloop.agent.prompting.material import focus_text, render_failures
from greenloop.agent.repair.rounds import candidate_rounds
from greenloop.llm import ContextOverflow, LLMError, StructuredOutputError
from greenloop_sandbox import TestReport
from greenloop_sandbox.offline import leave_out, needs_network

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


async def run_tests_on(state: RunState, copy: WorkingCopy, test_ids: list[str] | None) -> TestReport:
    """Sync the working copy into the sandbox (changed files only) and run the tests."""
    await state.ports.sandbox.sync(copy.files(), copy.deleted())
    return await state.ports.sandbox.run_tests(test_ids, timeout=state.settings.sandbox.test_timeout)


def tests_ran(state: RunState, iteration: int, report: TestReport) -> TestsRan:
    return state.stamp(
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
    state: RunState,
    copy: WorkingCopy,
    *,
    test_ids: list[str] | None = None,
    instruction: str | None = None,
    focus: Focus | None = None,
) -> AsyncIterator[Event]:
    """Yield the loop's events, ending with exactly one Done."""
    report = await run_tests_on(state, copy, test_ids)
    yield tests_ran(state, 0, report)
    if (cold := state.ports.sandbox.warm_notice()) is not None:  # runs went cold (warm.py): said once per run
        yield state.stamp(Message(text=cold, level="info"))
    offline = [f.test_id for f in report.failures if needs_network(f)]
    if offline and len(offline) < len(report.failures):  # the others are worth the loop; these cannot pass here
        state.ports.sandbox.leave_out(offline)
        report = leave_out(report, offline)
        names = ", ".join(offline[:5]) + (f" and {len(offline) - 5} more" if len(offline) > 5 else "")
        yield state.stamp(Message(level="warning", text=(
            f"{len(offline)} failing test(s) need the network, which the sandbox does not have: they are left "
            f"out of this run, neither fixed nor counted ({names}). The other {len(report.failures)} are fixed.")))
    if report.total == 0 and not report.failures and not instruction:
        yield state.done(copy, "no_tests", _no_tests_message(report), 0)
        return
    if report.green and not instruction:
        yield state.done(copy, "already_green", f"The tests already pass ({report.summary()}); nothing changed.", 0)
        return
    if instruction is None and state.settings.loop.strategy != "plan":
        async for event in candidate_rounds(state, copy, report, test_ids):
            yield event
        return
    async for event in _iterations(state, copy, report, test_ids, instruction, focus):
        yield event


async def _iterations(
    state: RunState,
    copy: WorkingCopy,
    report: TestReport,
    test_ids: list[str] | None,
    instruction: str | None,
    focus: Focus | None,
) -> AsyncIterator[Event]:
    max_it = state.settings.loop.max_iterations
    invalid_in_a_row = 0
    instruction_done = instruction is None
    best = BestState()  # a run that ends red leaves its best state (an improve run: once its change is made)
    if instruction_done:
        best.offer(report, copy, 0)

    def stop(outcome: Outcome, summary: str, iterations: int, evidence: str = "", tests: bool = False) -> Iterator[Event]:
        kept, note = best.keep(copy, report)
        if note:
            yield state.stamp(Message(text=note, level="warning"))
        summary = f"{summary}; {kept.summary()}." if tests else summary
        yield state.done(copy, outcome, summary, iterations, evidence)

    for iteration in range(1, max_it + 1):
        if (why := state.over_budget()) is not None:
            for event in stop("budget", f"Stopped: {why}.", iteration - 1, why):
                yield event
            return
        yield state.stamp(IterationStarted(iteration=iteration, max_iterations=max_it))
        step = _Step(state, copy, report, iteration, instruction, focus, instruction_done)
        before = copy.files()
        try:
            async for event in step.run():
                yield event
        except LLMError as exc:  # the model server failed for good: what the run reached is kept
            copy.restore(before)  # this iteration's changes were never tested
            yield state.stamp(Message(text=f"The model call failed: {exc}", level="error"))
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
            rerun = await run_tests_on(state, copy, test_ids)
            yield tests_ran(state, iteration, rerun)
            undone = _tests_lost(report, rerun) if fixing else ""
            if undone:  # the files go back; the earlier report still says what fails
                copy.restore(before)
                yield state.stamp(Message(text=f"Iteration {iteration}'s change was undone: {undone}.", level="warning"))
            else:
                report = rerun
                if instruction_done:
                    best.offer(report, copy, iteration)
        step.record_outcome(report, undone)
        yield state.budget_event(iteration)
        if instruction_done and (report.green or (report.total == 0 and instruction)):
            yield state.done(copy, *_success(report, instruction), iteration)
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
        state: RunState,
        copy: WorkingCopy,
        report: TestReport,
        iteration: int,
        instruction: str | None,
        focus: Focus | None,
        instruction_done: bool,
    ) -> None:
        self.state, self.copy, self.report, self.iteration = state, copy, report, iteration
        self.instruction, self.focus, self.instruction_done = instruction, focus, instruction_done
        self.plan: DebugPlan | None = None
        self.stuck: str | None = None
        self.error = ""
        self.changed = False
        self.changed_files = False
        self.attempt = Attempt(iteration=iteration, failing=_failing_line(report), diagnosis="", actions=[])
        self._before = copy.fingerprint()

    async def run(self) -> AsyncIterator[Event]:
        state = self.state
        code = await state.prompt_code.build(self.copy, self.report.failures)
        locations = [loc.to_json() for loc in code.locations]
        yield state.stamp(LocationsFound(iteration=self.iteration, locations=locations, context_tokens=code.tokens))
        values = self._prompt_values(code.text)
        if state.settings.loop.diagnosis and self.instruction_done:
            async for event in self._diagnose(values):
                yield event
        messages = self._plan_messages(values)
        async for event in self._plan_and_apply(messages):
            yield event

    def _prompt_values(self, code_text: str) -> dict[str, str]:
        history = self.state.history.render() if self.state.settings.loop.history else ""
        instruction = ""
        if self.instruction and self.instruction_done:
            instruction = f"\n## The person's request (keep it done while fixing)\n{self.instruction}\n"
        elif self.state.goal:
            instruction = GOAL_SECTION.format(goal=self.state.goal)
        focus = ""
        if self.focus is not None:
            focus = focus_text(self.copy, self.focus.path, self.focus.start_line, self.focus.end_line)
        return {
            "template": self.state.template,
            "failures": render_failures(self.report),
            "context": code_text,
            "history": history,
            "instruction": instruction,
            "focus": focus or "(no specific code was selected)",
            "diagnosis": "",
        }

    async def _diagnose(self, values: dict[str, str]) -> AsyncIterator[Event]:
        messages = _messages(self.state, render_prompt("diagnose", self.state.workspace, **values))
        parts: list[str] = []
        limit = min(DIAGNOSIS_TOKENS, self.state.settings.llm.max_tokens)
        async for delta in self.state.ports.llm.stream(messages, step="diagnosis", max_tokens=limit):
            parts.append(delta)
            yield self.state.stamp(DiagnosisDelta(iteration=self.iteration, text=delta))
        text = "".join(parts).strip()
        self.attempt.diagnosis = text
        values["diagnosis"] = DIAGNOSIS_SECTION.format(text=text) if text else ""
        yield self.state.stamp(Diagnosis(iteration=self.iteration, text=text))

    def _plan_messages(self, values: dict[str, str]) -> list[dict[str, str]]:
        if self.instruction and not self.instruction_done:
            values = {**values, "instruction": self.instruction}
            return _messages(self.state, render_prompt("improve", self.state.workspace, **values))
        return _messages(self.state, render_prompt("plan", self.state.workspace, **values))

    async def _plan_and_apply(self, messages: list[dict[str, str]]) -> AsyncIterator[Event]:
        state = self.state
        rejected = ""  # signature of the plan the last repair request was about
        outcome = ApplyOutcome()
        for round_ in range(EDIT_REPAIRS + 1):
            try:
                plan = await state.ports.llm.structured(messages, DebugPlan, step="debug_plan", attempt=round_)
            except ContextOverflow:
                if round_ == 0:
                    raise
                # a 201-line test file shown with the repair took the embedded model past its 8,192 tokens
                yield state.stamp(Message(text="The repair request would not fit the model's context window; "
                                             "no more repairs in this iteration.", level="warning"))
                return
            except StructuredOutputError as exc:
                self.error = str(exc)
                self.attempt.actions.append("(no valid plan)")
                yield state.stamp(Message(text=f"The model's plan was not valid: {exc}", level="warning"))
                return
            if plan_signature(plan) == rejected:  # asked to repair, it sent the same actions back
                yield state.stamp(Message(text="The model sent the rejected actions back unchanged; "
                                             "no more repairs in this iteration.", level="warning"))
                async for event in self._rewrite(outcome):
                    yield event
                return
            if round_ == 0:
                self.plan = plan
                self.attempt.diagnosis = self.attempt.diagnosis or plan.diagnosis
                earlier = state.history.repeat_of(failure_signature(self.report), plan_signature(plan), self.iteration)
                if earlier is not None:
                    self.stuck = self._stuck_evidence(earlier, plan)
                    yield state.stamp(PlanMade(iteration=self.iteration, plan=plan))
                    return
            yield state.stamp(PlanMade(iteration=self.iteration, plan=plan))
            outcome = await apply_plan(plan, self.copy, state.ports.sandbox, self.iteration, self.report.failures,
                                       state.tests)
            self._absorb(plan, outcome)
            for event in outcome.events:
                yield state.stamp(event)
            if not outcome.problems or (state.over_budget() is not None):
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
                {"role": "user", "content": render_prompt("edit_repair", state.workspace, problems=problems)},
            ]

    async def _rewrite(self, outcome: ApplyOutcome) -> AsyncIterator[Event]:
        """The small files whose edits still miss, written whole by the model (`loop.rewrite_lines`)."""
        state = self.state
        limit = state.settings.loop.rewrite_lines
        files = rewritable(outcome, self.copy, limit) if limit else {}
        diagnosis = self.attempt.diagnosis.strip()
        values = {"template": state.template, "failures": render_failures(self.report),
                  "diagnosis": f"\n## Diagnosis\n{diagnosis}\n" if diagnosis else ""}
        for path, problems in files.items():
            if state.over_budget() is not None:
                return
            yield state.stamp(Message(text=f"The edits to {path} did not apply; asking for the whole file."))
            try:
                action = await rewrite(state.ports.llm, self.copy, state.workspace, path, problems, values)
            except ContextOverflow:
                yield state.stamp(Message(text=f"The whole of {path} would not fit the model's context window; "
                                             "it is not rewritten.", level="warning"))
                continue
            if isinstance(action, str):
                yield state.stamp(Message(text=f"The model's rewrite of {path} was not usable: {action}.",
                                        level="warning"))
                continue
            plan = DebugPlan(diagnosis=f"The whole of {path}, written again.", actions=[action])
            yield state.stamp(PlanMade(iteration=self.iteration, plan=plan))
            applied = await apply_plan(plan, self.copy, state.ports.sandbox, self.iteration, tests=state.tests)
            self._absorb(plan, applied)
            for event in applied.events:
                yield state.stamp(event)

    def _absorb(self, plan: DebugPlan, outcome: ApplyOutcome) -> None:
        self.attempt.actions.extend(describe_action(a) for a in plan.actions)
        self.state.packages.extend(p for p in outcome.packages if p not in self.state.packages)
        self.state.installs.extend(outcome.installs)
        self.state.commands.extend(outcome.commands)
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
        self.state.history.add(self.attempt)


def _messages(state: RunState, user: str) -> list[dict[str, str]]:
    return [{"role": "system", "content": render_prompt("system", state.workspace)}, {"role": "user", "content": user}]


def _failing_line(report: TestReport) -> str:
    if not report.failures:
        return report.summary()
    first = report.failures[0]
    msg = (first.message or "").strip().splitlines()[:1]
    more = f" and {len(report.failures) - 1} more" if len(report.failures) > 1 else ""
    return f"{first.test_id}: {msg[0][:160] if msg else 'failed'}{more}"

