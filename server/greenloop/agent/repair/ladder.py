"""The repair ladder: every step of a candidate round, in the order a round reads them, each with its hooks.

A round (orchestration/candidate_strategy.py) is: the next step of the ladder -> its round -> the move. It
reads the entries by their kind (step.py says when each runs, what its hooks need and what they return):

1. before the round: "settle" (settle.py), when the tests may change: value conflicts judged and the
   checks rewritten, no model candidates; a better state starts the ladder again.
2. the order: the rungs of ORDER, first to last; a round that brings nothing better moves one rung on, a
   better state starts again from the top. Each rung is one module in `rungs/` (when it applies, what it
   asks, how it reads a reply, its form); its `place` hook puts its approaches in (after the rungs before
   it; the failing checks right after the first: rungs/failing_tests.py).
3. a fresh ladder: the stood-by skip (stood_by.py): what the model gave back unchanged is not asked first.
4. beside the model's round: "small edits" (rungs/small_edits.py) of the function or file asked about, once
   per function and state: before the model's round, or after it when a failing test hung.
5. on a green that passed the gates (orchestration/kept_green.py), the first that applies: the second look
   at a risky green (second_look.py), the model's own round after a small edit's green (own_round.py).
6. on the green kept: "trim" (trim.py): the earlier rounds' changes the green does not need, left out.

Adding a rung or a step is its module and one line here. `loop.rungs_off` turns off any entry by its name
(ablations). `LADDER` is the order a fix run reads; `Ladder.with_rung` gives a copy with one more rung.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass
from typing import Any, cast

from greenloop.agent.changes.testfiles import TestFiles
from greenloop.agent.changes.working_copy import WorkingCopy
from greenloop.agent.repair import own_round, second_look, settle, stood_by, trim
from greenloop.agent.repair.approach import Approach
from greenloop.agent.repair.check_statements import Check
from greenloop.agent.repair.ladder_rung import LadderState, Rung
from greenloop.agent.repair.rungs import (
    anew,
    blocks,
    broken_file,
    failing_tests,
    function,
    hotter,
    install,
    missing_name,
    next_ranked,
    oneshot,
    properties,
    region,
    several,
    small_edits,
)
from greenloop.agent.repair.splice import Target
from greenloop.agent.repair.step import AroundModel, BeforeRound, FreshLadder, OnGreen, OnKept, Step
from greenloop.retrieval import Location
from greenloop_sandbox import TestReport

ORDER: tuple[Rung, ...] = (
    install.RUNG,  # a module is not installed: it, with the declared requirements; no model
    missing_name.RUNG,  # the tests use a name a project module lacks (defined nowhere): it, added to that file
    broken_file.RUNG,  # a source file does not load: that file whole
    properties.RUNG,  # a bound method compared: `@property` on it; no model
    function.RUNG,  # the top-ranked function, written again
    hotter.RUNG,  # the top function, sampled hotter
    anew.RUNG,  # the top function written anew from the tests, when it is most of its file
    region.RUNG,  # a long top function: the lines to change, in place of the whole def asked above
    blocks.RUNG,  # SEARCH/REPLACE blocks on the top file
    several.RUNG,  # the top-ranked functions together, several of them changed in one reply
    next_ranked.RUNG,  # the defs ranked past those groups that no request showed, a group at a time
    failing_tests.RUNG,  # tests that may change: the failing checks, placed right after the first rung (its `place`)
)
ONESHOT: tuple[Rung, ...] = (oneshot.RUNG,)  # `loop.strategy = "oneshot"`: the baseline's one rung

Entry = Rung | Step


@dataclass(frozen=True)
class Ladder:
    """The entries of a round, in order; each kind is read where it runs (step.py)."""

    entries: tuple[Entry, ...]

    @property
    def before_round(self) -> tuple[BeforeRound, ...]:
        return tuple(cast(BeforeRound, e) for e in self._at("before the round"))

    @property
    def rungs(self) -> tuple[Rung, ...]:
        return tuple(e for e in self.entries if isinstance(e, Rung))

    @property
    def fresh(self) -> tuple[FreshLadder, ...]:
        return tuple(cast(FreshLadder, e) for e in self._at("a fresh ladder"))

    @property
    def beside_model(self) -> tuple[AroundModel, ...]:
        return tuple(cast(AroundModel, e) for e in self._at("before the model", "after the model"))

    @property
    def on_green(self) -> tuple[OnGreen, ...]:
        return tuple(cast(OnGreen, e) for e in self._at("on a green"))

    @property
    def on_kept(self) -> tuple[OnKept, ...]:
        return tuple(cast(OnKept, e) for e in self._at("on the green kept"))

    def names(self) -> tuple[str, ...]:
        """Every name `loop.rungs_off` may hold, in order."""
        return tuple(dict.fromkeys(e.name for e in self.entries if e.name))

    def without(self, off: Collection[str]) -> Ladder:
        """The ladder with the entries named in `off` left out."""
        return Ladder(tuple(e for e in self.entries if not e.name or e.name not in off))

    def with_rung(self, rung: Rung, before: str) -> Ladder:
        """A copy with `rung` put in right before the rung named `before`."""
        at = next(i for i, e in enumerate(self.entries) if isinstance(e, Rung) and e.name == before)
        return Ladder((*self.entries[:at], rung, *self.entries[at:]))

    def approaches(self, state: LadderState) -> list[Approach]:
        """The approaches for this state, in order: a round that brings nothing better moves one step on."""
        steps: list[Approach] = []
        for rung in self.rungs:
            steps = rung.place(steps, state)
        return steps

    def _at(self, *when: str) -> list[Any]:
        return [e for e in self.entries if not isinstance(e, Rung) and e.when in when]


LADDER = Ladder((
    settle.STEP,  # before the round: value conflicts settled, the checks rewritten (tests that may change)
    stood_by.STEP,  # a fresh ladder: what the model stood by is not asked first
    *ORDER,  # the rungs
    small_edits.BEFORE,  # before the model's round: the function's small edits, asked of no model
    small_edits.AFTER,  # after the model's round, when a failing test hung and the model brought nothing better
    second_look.STEP,  # on a risky green: the model's second look, shown that change
    own_round.STEP,  # on a small edit's green: the model's own round on the same failure
    trim.STEP,  # on the green kept: the earlier rounds' changes it does not need, left out
))
BASELINE = Ladder(ONESHOT)  # `loop.strategy = "oneshot"`: one rung, no step around it


def rung_names() -> tuple[str, ...]:
    """Every name `loop.rungs_off` may hold."""
    return LADDER.names()


def unknown_rungs(off: Collection[str]) -> str:
    """A sentence naming what in `off` is no rung ("" when every name is one)."""
    names = rung_names()
    unknown = [n for n in off if n not in names]
    if not unknown:
        return ""
    return (f"loop.rungs_off names no rung: {', '.join(repr(n) for n in unknown)}; the rungs are "
            + ", ".join(repr(n) for n in names))


def ladder(
    locations: list[Location], report: TestReport, copy: WorkingCopy, tests: TestFiles, *, oneshot: bool = False,
    failing_tests: Sequence[Target] = (), checks: Sequence[Check] = (), declared: Sequence[str] = (),
    off: Collection[str] = (),
) -> list[Approach]:
    """The approaches of the standard ladder (`LADDER`, or the baseline's) for this state, in order."""
    state = LadderState(locations, report, copy, tests, failing_tests, checks, tuple(declared))
    return (BASELINE if oneshot else LADDER).without(off).approaches(state)
