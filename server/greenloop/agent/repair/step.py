"""The kinds of ladder entry that are not rungs: when each runs in a round, what its hooks read and what they give.

A round of the candidate strategy reads the ladder (ladder.py) in this order, and each entry says by its kind
where it belongs:

- `BeforeRound` ("before the round"): may move the state before an approach is chosen, no model candidates
  (settle.py). Needs the run's `RunContext` and what the ledger judged and tested; emits events, returns `Settled`.
- a `Rung` (ladder_rung.py, "the order"): the approaches of the state, each rung's put in by its `place` hook.
- `FreshLadder` ("a fresh ladder"): passes over approaches when the ladder starts again from the top
  (stood_by.py). Needs the approach and what the ledger keeps; after the round it names what to keep.
- `AroundModel` ("before the model" / "after the model"): a round of no model, tested before the model's
  round or after it when that brought nothing better (rungs/small_edits.py). Needs the approach, the state's
  report and the settings; gives the approach of its own round (None: none).
- `OnGreen` ("on a green"): a green that passed the gates, judged once more (second_look.py, own_round.py):
  the first that applies runs. Needs a `GreenContext`; emits events, returns the Green to keep.
- `OnKept` ("on the green kept"): the green the step on a green kept, trimmed of the earlier changes it does
  not need (trim.py); every one that applies runs. Needs a `Kept`; emits events, returns the Green to offer.

Every entry has a `name` (what `loop.rungs_off` turns off; "" for one that is not turned off by name). A hook that
runs a round takes the event sink (event_sink.py) and returns its result as a value.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping
from typing import TYPE_CHECKING, Literal, Protocol

from greenloop.agent.changes.testfiles import TestFiles
from greenloop.agent.changes.working_copy import WorkingCopy
from greenloop.agent.event_sink import EventSink
from greenloop.agent.repair.answers import Side
from greenloop.agent.repair.approach import Approach
from greenloop.agent.repair.candidate_round import RoundResult
from greenloop.agent.repair.second_look import Green, GreenContext
from greenloop.agent.repair.settle import Settled
from greenloop.agent.repair.trim import Kept
from greenloop.retrieval import Location
from greenloop.settings import LoopSettings
from greenloop_sandbox import TestReport

if TYPE_CHECKING:
    from greenloop.agent.orchestration.run_context import RunContext

When = Literal["before the round", "a fresh ladder", "before the model", "after the model", "on a green",
               "on the green kept"]
Scores = Callable[[str], dict[int, float]]  # a path's line scores (the coverage pass)


class BeforeRound(Protocol):
    """Before the round: may move the state, asks no model for candidates (settle.py)."""

    name: str
    when: Literal["before the round"]

    def applies(self, tests: TestFiles) -> bool:
        """Whether it runs before this run's rounds."""
        ...

    async def run(self, context: RunContext, copy: WorkingCopy, report: TestReport,
                  judged: Mapping[tuple[str, str, str], Side | None], iteration: int,
                  seen: Mapping[int, str], events: EventSink) -> Settled:
        """Where it ended, its events (stamped) to `events`; `copy` stays as it is."""
        ...


class FreshLadder(Protocol):
    """When the ladder starts again from the top: which approaches are passed over (stood_by.py)."""

    name: str
    when: Literal["a fresh ladder"]

    def passes_over(self, approach: Approach, kept: frozenset[str]) -> bool:
        """Whether a fresh ladder skips `approach` (`kept`: what the ledger keeps of earlier rounds)."""
        ...

    def keeps(self, result: RoundResult) -> str | None:
        """What the ledger keeps of a round for later fresh ladders (None: nothing)."""
        ...


class AroundModel(Protocol):
    """A round of no model beside the approach's own: before the model's round, or after it (small edits)."""

    name: str
    when: Literal["before the model", "after the model"]

    def applies(self, approach: Approach, report: TestReport, loop: LoopSettings) -> bool:
        """Whether it runs beside the round of `approach` in this state."""
        ...

    def approach(self, approach: Approach, copy: WorkingCopy, report: TestReport, locations: list[Location],
                 scores: Scores, loop: LoopSettings, tried: Collection[tuple[int, str]]
                 ) -> tuple[Approach | None, tuple[int, str] | None]:
        """Its round's approach (None: none), and the key the ledger keeps as tried (None: nothing new)."""
        ...


class OnGreen(Protocol):
    """A green that passed the gates, judged once more before it is kept (the first that applies runs)."""

    name: str
    when: Literal["on a green"]

    def applies(self, green: GreenContext) -> bool:
        ...

    async def run(self, green: GreenContext, events: EventSink) -> Green:
        """The Green to keep, its events (not stamped) to `events`."""
        ...


class OnKept(Protocol):
    """The green kept, judged no more but trimmed before it is offered (trim.py): every one that applies runs."""

    name: str
    when: Literal["on the green kept"]

    def applies(self, kept: Kept) -> bool:
        ...

    async def run(self, kept: Kept, events: EventSink) -> Green:
        """The Green to offer, its events (not stamped) to `events`."""
        ...


Step = BeforeRound | FreshLadder | AroundModel | OnGreen | OnKept
