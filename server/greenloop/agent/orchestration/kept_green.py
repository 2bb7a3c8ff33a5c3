"""What a green round must pass before it is offered as done: the gates, then a second look or the model's own round.

The candidate strategy calls `gated` on every green round (a small edit's or a model's) and `kept` on one
that passed. `gated` runs the regression and slowdown gates (repair/gates.py): a green that turns a passing
test red is not green (the round becomes "nothing better", the loop goes on, the next round is told which
tests broke); a slower one is risky. `kept` judges the green (risk.py, overfit_shapes.py) by the ladder's
first step on a green that applies (repair/ladder.py: a risky one gets the model's second look, a small
edit's the model's own round), then trims it (the ladder's steps on the green kept: trim.py leaves out the
earlier rounds' changes it does not need); the ledger keeps the green chosen, why, and the other green beside it.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from greenloop.agent.changes.working_copy import WorkingCopy
from greenloop.agent.event_sink import EventList, EventSink
from greenloop.agent.events import Message
from greenloop.agent.prompting.material import tidy
from greenloop.agent.repair.approach import Approach
from greenloop.agent.repair.candidate_round import RoundInputs, RoundResult
from greenloop.agent.repair.gates import Gate, GateResult, check
from greenloop.agent.repair.overfit_shapes import Evidence, evidence_of
from greenloop.agent.repair.prompts import repair_messages
from greenloop.agent.repair.rungs.small_edits import SmallEditsForm
from greenloop.agent.repair.second_look import Green, GreenContext, green_of
from greenloop.agent.repair.step import OnGreen, OnKept
from greenloop.agent.repair.trim import Kept, Move
from greenloop.llm import LLMError
from greenloop_sandbox import TestReport

if TYPE_CHECKING:
    from greenloop.agent.orchestration.run_context import RunContext


@dataclass(frozen=True)
class Gated:
    """What the gates made of a green round: the Green to judge, or the round refused (not green)."""

    green: Green | None = None
    refused: RoundResult | None = None


async def gated(context: RunContext, inputs: RoundInputs, copy: WorkingCopy, report: TestReport, result: RoundResult,
                events: EventSink) -> Gated:
    """The gates for a green round, their events (stamped) to `events`: the Green (its slowdown in its risk), or
    the round refused, made "nothing better", when the change broke a passing test."""
    green = green_of(result, copy, evidence(copy, report))
    started = time.monotonic()
    found = await _check(context, inputs, copy, report, result)
    if found.ran:
        events.emit(context.stamp(Message(text=f"The gates ran {found.ran} test run(s) on the green change in "
                                               f"{time.monotonic() - started:.1f} s.", level="info")))
    for note in found.notes:
        events.emit(context.stamp(Message(text=note, level="warning")))
    if found.broken:
        said = ", ".join(found.broken[:5]) + (f" and {len(found.broken) - 5} more" if len(found.broken) > 5 else "")
        events.emit(context.stamp(Message(text=f"A {green.kind} turns the failing tests green but breaks {said}, which "
                                               "passed before: it is not green; the loop goes on.", level="warning")))
        return Gated(refused=not_green(result, found))
    return Gated(green=replace(green, risk="; ".join(r for r in (green.risk, found.risk) if r)))


async def judged(context: RunContext, inputs: RoundInputs, copy: WorkingCopy, report: TestReport, green: Green,
                 events: EventSink) -> Green | None:
    """A green of a second look or an own round through the gates, their lines to `events`: kept (with its risk),
    or None."""
    found = (await gated(context, inputs, copy, report, green.result, events)).green
    if found is None:  # refused by the gates
        return None
    return replace(found, risk="; ".join(dict.fromkeys(r for r in (green.risk, found.risk) if r)), copied=green.copied)


async def kept(context: RunContext, inputs: RoundInputs, approach: Approach, copy: WorkingCopy, report: TestReport,
               green: Green, on_green: Sequence[OnGreen], events: EventSink, model_ran: bool = False,
               on_kept: Sequence[OnKept] = (), moves: Sequence[Move] = ()) -> RoundResult:
    """A green that passed the gates, judged by the ladder's first step `on_green` that applies (a risky one:
    the model's second look; a small edit's: the model's own round; `model_ran`: the model's round on it came
    first and gave no green, hangs-model-first), then by each step `on_kept` that applies (trim: `moves` are the
    rounds that moved the state). Its events go to `events` (the gates' lines on the step's own greens after the
    step's); returns the round to keep; the ledger keeps what the change set says."""
    told = EventList()

    async def judge(other: Green) -> Green | None:
        return await judged(context, inputs, copy, report, other, told)

    small = green.result.approach.route == SmallEditsForm.route
    spent = context.over_budget() is not None
    asked = approach.form.asks_model and not approach.test and not spent
    green_context = GreenContext(green, approach, small, model_ran, asked, spent, context.settings.loop,
                                 lambda again: _asking(context, inputs, again, copy, report), copy, report, judge,
                                 evidence(copy, report))
    try:
        for step in on_green:
            if step.applies(green_context):
                green = await step.run(green_context, events)
                break
    except LLMError as exc:  # the green stays; only the model's round is lost
        events.emit(Message(text=f"The model's round failed: {exc}", level="warning"))
        green = replace(green, risk=green.risk or ("a small edit not checked against the model's own fix (its "
                                                   "round failed)" if small else ""),
                        reason="the only green change: the model could not be asked again")
    told.tell(events)
    here = Kept(green, copy, report, inputs, moves, context.settings.loop,
                lambda other: judged(context, inputs, copy, report, other, events))
    for after in on_kept:
        if after.applies(here):
            green = await after.run(replace(here, green=green), events)
    context.ledger.chose(green.kind, green.risk, green.reason or "the first change that made the tests pass",
                         green.beside)
    return green.result


def evidence(copy: WorkingCopy, report: TestReport) -> Evidence:
    """What the state's failures say, for the risk rules (overfit_shapes.py)."""
    paths = {f.test_id.split("::", 1)[0] for f in report.failures}
    paths.update(p for p in copy.paths() if p.endswith(".py"))
    sources = {p: text for p in paths if (text := copy.read(p)) is not None}
    return evidence_of([(f.test_id, f.traceback or f.message) for f in report.failures], sources)


def not_green(result: RoundResult, found: GateResult) -> RoundResult:
    """The round as nothing better: its green candidate broke passing tests, which the next round is told."""
    best = result.best
    said = "; ".join(tidy(f) for f in found.failures[:3]) or ", ".join(found.broken)
    if best is not None:
        best = replace(best, green=False, feedback=f"the failing tests pass, but tests that passed before fail: {said}")
    return replace(result, best=best, ended="nothing_better", report=None, files=None, packages=(), commands=(),
                   installs=())


async def _check(context: RunContext, inputs: RoundInputs, copy: WorkingCopy, report: TestReport,
                 result: RoundResult) -> GateResult:
    loop, ledger = context.settings.loop, context.ledger
    if inputs.suite is None and report.cases:  # every run is the whole suite: its time is known
        ledger.whole_suite_took(report.duration)
    gate = Gate(inputs.sandbox, inputs.test_timeout, inputs.suite, loop.full_suite_seconds, ledger.whole_suite_seconds)
    tests = {p: text for p in copy.paths() if context.tests.is_test(p) and (text := copy.read(p)) is not None}
    async with inputs.sandbox.lease() as box:
        found = await check(replace(gate, sandbox=box), copy.files(), dict(result.files or {}), report,
                            result.report or report, context.prompt_code.spectra.spectrum, tests)
    ledger.whole_suite_took(found.whole_seconds)
    return found


def _asking(context: RunContext, inputs: RoundInputs, approach: Approach, copy: WorkingCopy,
            report: TestReport) -> RoundInputs:
    """The round's inputs with the messages that ask `approach`."""
    return replace(inputs, messages=repair_messages(approach, copy, context.prompt_code.index, report, context.tests,
                                                    template=context.template, workspace=context.workspace,
                                                    shows=context.prompt_code.request_shows()))
