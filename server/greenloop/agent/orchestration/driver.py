"""The one loop driver: it owns the iterations, the budget, model errors and the run's one `Done`.

A strategy (`candidate_strategy.py`: candidates and the one-shot baseline; `plan_strategy.py`: the
DebugPlan loop) fills each round: `next_round` emits the round's events to the sink it is given
(event_sink.py) and returns one frozen `RoundEnd`, a value: the state's test report after the round and
what the round found that may end the run (green, stuck, an error, its candidates cut by the budget). The
driver alone decides whether and why the run ends (`Why`: those findings, the budget before a round, a
failed model call, no rounds left) and builds the run's one `Done`, which it returns; the strategy's
`ending` only words that end (the `Stop`) and tidies up (the plan loop keeps its best state).
Cancellation is the consumer closing the loop's stream (or cancelling its task): event_sink.streamed
cancels the task the driver runs in, which reaches the round that is running, whose own `finally` stops
what it started (candidate_round.py); no `Done` follows, the recorded run says it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal, Protocol

from greenloop.agent.changes.working_copy import WorkingCopy
from greenloop.agent.event_sink import EventSink
from greenloop.agent.events import Done, IterationStarted, Message, Outcome
from greenloop.llm import LLMError
from greenloop_sandbox import TestReport

if TYPE_CHECKING:
    from greenloop.agent.orchestration.run_context import RunContext

Found = Literal["green", "stuck", "error", "budget"]  # what a round found that ends the run
Why = Literal["green", "stuck", "error", "budget", "model_error", "rounds"]  # why the driver ends the run


@dataclass(frozen=True)
class Stop:
    """How the strategy words the end the driver decided: the `Done`'s outcome, summary, iterations and evidence."""

    outcome: Outcome
    summary: str
    iterations: int
    evidence: str = ""


@dataclass(frozen=True)
class RoundEnd:
    """What every strategy's round reports: the state's tests after it, and what it found that ends the run
    (None: nothing; the driver decides)."""

    report: TestReport
    found: Found | None = None
    evidence: str = ""  # what the finding rests on (stuck: what the spent approaches gave)


class Strategy(Protocol):
    """One way of filling a round (candidates, plan, oneshot)."""

    max_iterations: int

    async def next_round(self, iteration: int, report: TestReport, events: EventSink) -> RoundEnd:
        """The round, its events (stamped) to `events`; returns its RoundEnd."""
        ...

    def ending(self, why: Why, iteration: int, report: TestReport, detail: str, events: EventSink) -> Stop:
        """The words of the end the driver decided (`iteration`: the round it ended in, or the rounds done before
        one that did not start), its events (stamped) to `events`."""
        ...


async def drive(context: RunContext, copy: WorkingCopy, report: TestReport, strategy: Strategy,
                events: EventSink) -> Done:
    """The strategy's rounds, their events to `events`; returns the run's one Done (not emitted: the caller's)."""
    max_it = strategy.max_iterations
    stop: Stop | None = None
    for iteration in range(1, max_it + 1):
        if (why := context.over_budget()) is not None:
            stop = strategy.ending("budget", iteration - 1, report, why, events)
            break
        events.emit(context.stamp(IterationStarted(iteration=iteration, max_iterations=max_it)))
        try:
            end = await strategy.next_round(iteration, report, events)
        except LLMError as exc:  # the model server failed for good: what the run reached is kept
            events.emit(context.stamp(Message(text=f"The model call failed: {exc}", level="error")))
            stop = strategy.ending("model_error", iteration, report, str(exc), events)
            break
        report = end.report
        if end.found is not None:
            detail = (context.over_budget() or "budget") if end.found == "budget" else end.evidence
            stop = strategy.ending(end.found, iteration, report, detail, events)
            break
    if stop is None:
        stop = strategy.ending("rounds", max_it, report, "max iterations reached", events)
    return context.done(copy, stop.outcome, stop.summary, stop.iterations, stop.evidence)
