"""The plan strategy's rounds (`loop.strategy = "plan"`, and every improve run): diagnose, plan, apply, rerun.

Each iteration is one `_Step` (the model's diagnosis and JSON DebugPlan, applied to the working copy with
up to EDIT_REPAIRS repairs of rejected actions), then the tests again, driven by driver.py; events go to the
sink each call is given (event_sink.py). A change that loses tests is undone; a run that ends red keeps its
best state (best.py).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from greenloop.agent.changes.actions import ApplyOutcome, apply_plan
from greenloop.agent.changes.working_copy import WorkingCopy
from greenloop.agent.event_sink import EventSink
from greenloop.agent.events import (
    Diagnosis,
    DiagnosisDelta,
    LocationsFound,
    Message,
    Outcome,
    PlanMade,
)
from greenloop.agent.orchestration.best import BestState
from greenloop.agent.orchestration.driver import RoundEnd, Stop, Why
from greenloop.agent.orchestration.history import (
    Attempt,
    describe_action,
    failure_signature,
    plan_signature,
)
from greenloop.agent.orchestration.rewrite import rewritable, rewrite
from greenloop.agent.orchestration.tests_run import run_tests_on, tests_ran
from greenloop.agent.plan import DebugPlan
from greenloop.agent.prompting.files import render_prompt
from greenloop.agent.prompting.material import focus_text, render_failures
from greenloop.llm import ContextOverflow, StructuredOutputError
from greenloop_sandbox import TestReport

if TYPE_CHECKING:
    from greenloop.agent.orchestration.focus import Focus
    from greenloop.agent.orchestration.run_context import RunContext

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


class PlanStrategy:
    """The DebugPlan rounds; with an instruction (improve), the first rounds carry out the request."""

    def __init__(self, context: RunContext, copy: WorkingCopy, report: TestReport, test_ids: list[str] | None,
                 instruction: str | None, focus: Focus | None) -> None:
        self.context, self.copy, self.test_ids = context, copy, test_ids
        self.instruction, self.focus = instruction, focus
        self.max_iterations = context.settings.loop.max_iterations
        self.invalid_in_a_row = 0
        self.instruction_done = instruction is None
        self.best = BestState()  # a run that ends red leaves its best state (an improve run: once its change is made)
        if self.instruction_done:
            self.best.offer(report, copy, 0)
        self.before: dict[str, bytes] = {}  # the files as the running round found them

    def ending(self, why: Why, iteration: int, report: TestReport, detail: str, events: EventSink) -> Stop:
        if why == "green":
            return Stop(*_success(report, self.instruction), iteration)
        if why == "stuck":
            return self._stop(report, "stuck", "Stopped: the model repeats an attempt that did not work.", iteration,
                              events, detail)
        if why == "error":
            msg = "The model did not return a valid plan; nothing was changed by this iteration."
            return self._stop(report, "error", msg, iteration, events, detail)
        if why == "budget":
            return self._stop(report, "budget", f"Stopped: {detail}.", iteration, events, detail)
        if why == "model_error":
            self.copy.restore(self.before)  # this iteration's changes were never tested
            summary = f"Stopped in iteration {iteration}: the model call failed"
            return self._stop(report, "error", summary, iteration - 1, events, detail, tests=True)
        return self._stop(report, "budget", f"Stopped after {iteration} iterations", iteration, events, detail,
                          tests=True)

    def _stop(self, report: TestReport, outcome: Outcome, summary: str, iterations: int, events: EventSink,
              evidence: str = "", tests: bool = False) -> Stop:
        kept, note = self.best.keep(self.copy, report)
        if note:
            events.emit(self.context.stamp(Message(text=note, level="warning")))
        return Stop(outcome, f"{summary}; {kept.summary()}." if tests else summary, iterations, evidence)

    async def next_round(self, iteration: int, report: TestReport, events: EventSink) -> RoundEnd:
        """One iteration, its events to `events`; returns its RoundEnd."""
        context, copy, instruction = self.context, self.copy, self.instruction
        step = _Step(context, copy, report, iteration, instruction, self.focus, self.instruction_done)
        self.before = before = copy.files()
        await step.run(events)
        if step.stuck is not None:
            return RoundEnd(report, "stuck", step.stuck)
        self.invalid_in_a_row = self.invalid_in_a_row + 1 if step.plan is None else 0
        if self.invalid_in_a_row >= INVALID_PLANS_IN_A_ROW:
            return RoundEnd(report, "error", step.error)
        fixing = self.instruction_done  # not carrying out a request (which may be to remove tests)
        self.instruction_done = self.instruction_done or step.changed_files
        undone = ""
        if step.changed:
            rerun = await run_tests_on(context, copy, self.test_ids)
            events.emit(tests_ran(context, iteration, rerun))
            undone = _tests_lost(report, rerun) if fixing else ""
            if undone:  # the files go back; the earlier report still says what fails
                copy.restore(before)
                events.emit(context.stamp(Message(text=f"Iteration {iteration}'s change was undone: {undone}.",
                                                  level="warning")))
            else:
                report = rerun
                if self.instruction_done:
                    self.best.offer(report, copy, iteration)
        step.record_outcome(report, undone)
        events.emit(context.budget_event(iteration))
        if self.instruction_done and (report.green or (report.total == 0 and instruction)):
            return RoundEnd(report, "green")
        return RoundEnd(report)


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



class _Step:
    """One iteration's model work: the code shown, diagnosis, plan, apply (with edit repairs)."""

    def __init__(
        self,
        context: RunContext,
        copy: WorkingCopy,
        report: TestReport,
        iteration: int,
        instruction: str | None,
        focus: Focus | None,
        instruction_done: bool,
    ) -> None:
        self.context, self.copy, self.report, self.iteration = context, copy, report, iteration
        self.instruction, self.focus, self.instruction_done = instruction, focus, instruction_done
        self.plan: DebugPlan | None = None
        self.stuck: str | None = None
        self.error = ""
        self.changed = False
        self.changed_files = False
        self.attempt = Attempt(iteration=iteration, failing=_failing_line(report), diagnosis="", actions=[])
        self._before = copy.fingerprint()

    async def run(self, events: EventSink) -> None:
        context = self.context
        code = await context.prompt_code.build(self.copy, self.report.failures)
        locations = [loc.to_json() for loc in code.locations]
        events.emit(context.stamp(LocationsFound(iteration=self.iteration, locations=locations,
                                                 context_tokens=code.tokens)))
        values = self._prompt_values(code.text)
        if context.settings.loop.diagnosis and self.instruction_done:
            await self._diagnose(values, events)
        messages = self._plan_messages(values)
        await self._plan_and_apply(messages, events)

    def _prompt_values(self, code_text: str) -> dict[str, str]:
        history = self.context.history.render() if self.context.settings.loop.history else ""
        instruction = ""
        if self.instruction and self.instruction_done:
            instruction = f"\n## The person's request (keep it done while fixing)\n{self.instruction}\n"
        elif self.context.goal:
            instruction = GOAL_SECTION.format(goal=self.context.goal)
        focus = ""
        if self.focus is not None:
            focus = focus_text(self.copy, self.focus.path, self.focus.start_line, self.focus.end_line)
        return {
            "template": self.context.template,
            "failures": render_failures(self.report),
            "context": code_text,
            "history": history,
            "instruction": instruction,
            "focus": focus or "(no specific code was selected)",
            "diagnosis": "",
        }

    async def _diagnose(self, values: dict[str, str], events: EventSink) -> None:
        messages = _messages(self.context, render_prompt("diagnose", self.context.workspace, **values))
        parts: list[str] = []
        limit = min(DIAGNOSIS_TOKENS, self.context.settings.llm.max_tokens)
        async for delta in self.context.ports.llm.stream(messages, step="diagnosis", max_tokens=limit):
            parts.append(delta)
            events.emit(self.context.stamp(DiagnosisDelta(iteration=self.iteration, text=delta)))
        text = "".join(parts).strip()
        self.attempt.diagnosis = text
        values["diagnosis"] = DIAGNOSIS_SECTION.format(text=text) if text else ""
        events.emit(self.context.stamp(Diagnosis(iteration=self.iteration, text=text)))

    def _plan_messages(self, values: dict[str, str]) -> list[dict[str, str]]:
        if self.instruction and not self.instruction_done:
            values = {**values, "instruction": self.instruction}
            return _messages(self.context, render_prompt("improve", self.context.workspace, **values))
        return _messages(self.context, render_prompt("plan", self.context.workspace, **values))

    async def _plan_and_apply(self, messages: list[dict[str, str]], events: EventSink) -> None:
        context = self.context
        rejected = ""  # signature of the plan the last repair request was about
        outcome = ApplyOutcome()
        for round_ in range(EDIT_REPAIRS + 1):
            try:
                plan = await context.ports.llm.structured(messages, DebugPlan, step="debug_plan", attempt=round_)
            except ContextOverflow:
                if round_ == 0:
                    raise
                # a 201-line test file shown with the repair took the embedded model past its 8,192 tokens
                events.emit(context.stamp(Message(text="The repair request would not fit the model's context window; "
                                                       "no more repairs in this iteration.", level="warning")))
                return
            except StructuredOutputError as exc:
                self.error = str(exc)
                self.attempt.actions.append("(no valid plan)")
                events.emit(context.stamp(Message(text=f"The model's plan was not valid: {exc}", level="warning")))
                return
            if plan_signature(plan) == rejected:  # asked to repair, it sent the same actions back
                events.emit(context.stamp(Message(text="The model sent the rejected actions back unchanged; "
                                                       "no more repairs in this iteration.", level="warning")))
                await self._rewrite(outcome, events)
                return
            if round_ == 0:
                self.plan = plan
                self.attempt.diagnosis = self.attempt.diagnosis or plan.diagnosis
                earlier = context.history.repeat_of(failure_signature(self.report), plan_signature(plan),
                                                    self.iteration)
                if earlier is not None:
                    self.stuck = self._stuck_evidence(earlier, plan)
                    events.emit(context.stamp(PlanMade(iteration=self.iteration, plan=plan)))
                    return
            events.emit(context.stamp(PlanMade(iteration=self.iteration, plan=plan)))
            outcome = await apply_plan(plan, self.copy, context.ports.sandbox, self.iteration, self.report.failures,
                                       context.tests)
            self._absorb(plan, outcome)
            for event in outcome.events:
                events.emit(context.stamp(event))
            if not outcome.problems or (context.over_budget() is not None):
                return
            if round_ == EDIT_REPAIRS:
                await self._rewrite(outcome, events)
                return
            problems = "\n".join(outcome.problems)
            rejected = plan_signature(plan)
            messages = [
                *messages,
                {"role": "assistant", "content": plan.model_dump_json()},
                {"role": "user", "content": render_prompt("edit_repair", context.workspace, problems=problems)},
            ]

    async def _rewrite(self, outcome: ApplyOutcome, events: EventSink) -> None:
        """The small files whose edits still miss, written whole by the model (`loop.rewrite_lines`)."""
        context = self.context
        limit = context.settings.loop.rewrite_lines
        files = rewritable(outcome, self.copy, limit) if limit else {}
        diagnosis = self.attempt.diagnosis.strip()
        values = {"template": context.template, "failures": render_failures(self.report),
                  "diagnosis": f"\n## Diagnosis\n{diagnosis}\n" if diagnosis else ""}
        for path, problems in files.items():
            if context.over_budget() is not None:
                return
            events.emit(context.stamp(Message(text=f"The edits to {path} did not apply; asking for the whole file.")))
            try:
                action = await rewrite(context.ports.llm, self.copy, context.workspace, path, problems, values)
            except ContextOverflow:
                events.emit(context.stamp(Message(text=f"The whole of {path} would not fit the model's context window; "
                                                       "it is not rewritten.", level="warning")))
                continue
            if isinstance(action, str):
                events.emit(context.stamp(Message(text=f"The model's rewrite of {path} was not usable: {action}.",
                                                  level="warning")))
                continue
            plan = DebugPlan(diagnosis=f"The whole of {path}, written again.", actions=[action])
            events.emit(context.stamp(PlanMade(iteration=self.iteration, plan=plan)))
            applied = await apply_plan(plan, self.copy, context.ports.sandbox, self.iteration, tests=context.tests)
            self._absorb(plan, applied)
            for event in applied.events:
                events.emit(context.stamp(event))

    def _absorb(self, plan: DebugPlan, outcome: ApplyOutcome) -> None:
        self.attempt.actions.extend(describe_action(a) for a in plan.actions)
        self.context.ledger.environment_changed(outcome.packages, outcome.commands, outcome.installs)
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
        self.context.history.add(self.attempt)


def _messages(context: RunContext, user: str) -> list[dict[str, str]]:
    return [{"role": "system", "content": render_prompt("system", context.workspace)},
            {"role": "user", "content": user}]


def _failing_line(report: TestReport) -> str:
    if not report.failures:
        return report.summary()
    first = report.failures[0]
    msg = (first.message or "").strip().splitlines()[:1]
    more = f" and {len(report.failures) - 1} more" if len(report.failures) > 1 else ""
    return f"{first.test_id}: {msg[0][:160] if msg else 'failed'}{more}"

