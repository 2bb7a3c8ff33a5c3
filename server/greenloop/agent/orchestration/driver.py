"""The one loop driver: it owns the iterations, the budget, model errors and the run's one `Done`.

A strategy (`candidate_strategy.py`: candidates and the one-shot baseline; `plan_strategy.py`: the
DebugPlan loop) fills each round: `next_round` yields the round's events and ends with one frozen
`RoundEnd`, a value: the state's test report after the round and what the round found that may end the
run (green, stuck, an error, its candidates cut by the budget). The driver alone decides whether and why
the run ends (`Why`: those findings, the budget before a round, a failed model call, no rounds left) and
builds the run's one `Done`; the strategy's `ending` only words that end (the `Stop`) and tidies up
(the plan loop keeps its best state). Cancellation
is the consumer closing the generator (or cancelling its task): it reaches the round that is running,
whose own `finally` stops what it started (round.py); no `Done` follows, the recorded run says it.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal, Protocol

from greenloop.agent.changes.working_copy import WorkingCopy
from greenloop.agent.events import Event, IterationStarted, Message, Outcome
from greenloop.llm import LLMError
from greenloop_sandbox import TestReport

if TYPE_CHECKING:
    from greenloop.agent.orchestration.run_state import RunState

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

    def next_round(self, iteration: int, report: TestReport) -> AsyncIterator[Event | RoundEnd]:
        """The round's events, then its RoundEnd (always last)."""
        ...

    def ending(self, why: Why, iteration: int, report: TestReport, detail: str) -> Iterator[Event | Stop]:
        """The events of the end the driver decided (`iteration`: the round it ended in, or the rounds done before
        one that did not start), then its Stop (last)."""
        ...


async def drive(state: RunState, copy: WorkingCopy, report: TestReport, strategy: Strategy) -> AsyncIterator[Event]:
    """Yield the strategy's rounds' events, ending with exactly one Done."""
    max_it = strategy.max_iterations
    ending: Iterator[Event | Stop] | None = None
    for iteration in range(1, max_it + 1):
        if (why := state.over_budget()) is not None:
            ending = strategy.ending("budget", iteration - 1, report, why)
            break
        yield state.stamp(IterationStarted(iteration=iteration, max_iterations=max_it))
        end: RoundEnd | None = None
        try:
            async for item in strategy.next_round(iteration, report):
                if isinstance(item, RoundEnd):
                    end = item
                else:
                    yield item
        except LLMError as exc:  # the model server failed for good: what the run reached is kept
            yield state.stamp(Message(text=f"The model call failed: {exc}", level="error"))
            ending = strategy.ending("model_error", iteration, report, str(exc))
            break
        if end is None:
            raise RuntimeError("a strategy's round ended without its RoundEnd")
        report = end.report
        if end.found is not None:
            detail = (state.over_budget() or "budget") if end.found == "budget" else end.evidence
            ending = strategy.ending(end.found, iteration, report, detail)
            break
    if ending is None:
        ending = strategy.ending("rounds", max_it, report, "max iterations reached")
    for last in ending:
        if isinstance(last, Stop):
            yield state.done(copy, last.outcome, last.summary, last.iterations, last.evidence)
            return
        yield last
    raise RuntimeError("a strategy's ending gave no Stop")
