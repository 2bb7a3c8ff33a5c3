"""The test-fix loop's entry: the tests run once, then the one driver (driver.py) runs the chosen strategy's rounds."""

from __future__ import annotations

from collections.abc import Mapping

from greenloop.agent.changes.working_copy import WorkingCopy
from greenloop.agent.environment.step import EnvironmentStep
from greenloop.agent.event_sink import EventSink
from greenloop.agent.events import Done, Message
from greenloop.agent.orchestration.candidate_strategy import CandidateStrategy
from greenloop.agent.orchestration.driver import Strategy, drive
from greenloop.agent.orchestration.focus import Focus
from greenloop.agent.orchestration.plan_strategy import PlanStrategy
from greenloop.agent.orchestration.run_context import RunContext
from greenloop.agent.orchestration.tests_run import run_tests_on, tests_ran
from greenloop_sandbox import TestReport
from greenloop_sandbox.offline import leave_out, needs_network


async def fix_loop(
    context: RunContext,
    copy: WorkingCopy,
    events: EventSink,
    *,
    test_ids: list[str] | None = None,
    instruction: str | None = None,
    focus: Focus | None = None,
    interpreter: Mapping[str, str] | None = None,
    interpreter_note: str = "",
) -> Done:
    """The loop, its events to `events`; returns its one Done. The environment step comes first (its own step,
    no round: environment/step.py); `interpreter`: the editor's interpreter's package versions."""
    step = EnvironmentStep(context.ports.sandbox, copy, interpreter)
    if interpreter_note:
        step.lines.append(interpreter_note)
    await step.prepare()
    report = await run_tests_on(context, copy, test_ids)
    report, issue = await step.settle(report, test_ids, context.settings.sandbox.test_timeout)
    events.emit(context.stamp(step.event(issue)))
    events.emit(tests_ran(context, 0, report))
    if issue is not None:  # the tests cannot run here: said, and no candidate made nor model asked
        where = f"{issue.file}:{issue.line}" if issue.file and issue.line else (issue.file or "the test run")
        return context.done(copy, "environment", (
            f"The tests cannot run in the sandbox: {issue.problem.replace('_', ' ')} at {where}: {issue.message}. "
            f"{issue.fix}").strip(), 0, evidence=issue.message)
    if (cold := context.ports.sandbox.warm_notice()) is not None:  # runs went cold (warm.py): said once per run
        events.emit(context.stamp(Message(text=cold, level="info")))
    offline = [f.test_id for f in report.failures if needs_network(f)]
    if offline and len(offline) < len(report.failures):  # the others are worth the loop; these cannot pass here
        context.ports.sandbox.leave_out(offline)
        report = leave_out(report, offline)
        names = ", ".join(offline[:5]) + (f" and {len(offline) - 5} more" if len(offline) > 5 else "")
        events.emit(context.stamp(Message(level="warning", text=(
            f"{len(offline)} failing test(s) need the network, which the sandbox does not have: they are left "
            f"out of this run, neither fixed nor counted ({names}). The other {len(report.failures)} are fixed."))))
    if report.total == 0 and not report.failures and not instruction:
        return context.done(copy, "no_tests", _no_tests_message(report), 0)
    if report.green and not instruction:
        return context.done(copy, "already_green", f"The tests already pass ({report.summary()}); nothing changed.", 0)
    strategy: Strategy
    if instruction is None and context.settings.loop.strategy != "plan":
        strategy = CandidateStrategy(context, copy, test_ids)  # candidates, or the one-shot baseline
    else:
        strategy = PlanStrategy(context, copy, report, test_ids, instruction, focus)
    return await drive(context, copy, report, strategy, events)


def _no_tests_message(report: TestReport) -> str:
    tail = report.raw.strip().splitlines()[-5:]
    return "No tests were found in this workspace; there is nothing to fix." + (
        "\nTest command output:\n" + "\n".join(tail) if tail else ""
    )
