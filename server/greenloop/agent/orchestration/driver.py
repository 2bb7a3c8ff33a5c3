"""The one loop driver: it owns the iterations, the budget, model errors and the run's one `Done`.

A strategy (`candidate_strategy.py`: candidates and the one-shot baseline; `plan_strategy.py`: the
DebugPlan loop) fills each round: `next_round` yields the round's events and ends with one frozen
`RoundEnd`, the state's test report after the round and, when the run is over, its `Stop`. How the
run's end reads (budget, a failed model call, no rounds left) is the strategy's `ending`. Cancellation
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

Ending = Literal["budget", "model_error", "rounds"]  # why the driver, not a round, ends the run


@dataclass(frozen=True)
class Stop:
    """How the run ends: the `Done`'s outcome, summary, iterations and evidence."""

    outcome: Outcome
    summary: str
    iterations: int
    evidence: str = ""


@dataclass(frozen=True)
class RoundEnd:
    """What every strategy's round reports: the state's tests after it, and whether the run is over."""

    report: TestReport
    stop: Stop | None = None


class Strategy(Protocol):
    """One way of filling a round (candidates, plan, oneshot)."""

    max_iterations: int

    def next_round(self, iteration: int, report: TestReport) -> AsyncIterator[Event | RoundEnd]:
        """The round's events, then its RoundEnd (always last)."""
        ...

    def ending(self, why: Ending, iteration: int, report: TestReport, detail: str) -> Iterator[Event | Stop]:
        """The events of an end the driver decides (`iteration`: the rounds done), then its Stop (last)."""
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
        if end.stop is not None:
            ending = iter([end.stop])
            break
    if ending is None:
        ending = strategy.ending("rounds", max_it, report, "max iterations reached")
    for last in ending:
        if isinstance(last, Stop):
            yield state.done(copy, last.outcome, last.summary, last.iterations, last.evidence)
            return
        yield last
    raise RuntimeError("a strategy's ending gave no Stop")
