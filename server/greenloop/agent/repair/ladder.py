"""The repair ladder's order: the rungs a state's rounds try, first to last; a round that brings nothing better
moves one rung on, a better state starts again from the top.

Each rung is one module in `rungs/` (when it applies, what it asks, how it reads a reply, its kind);
adding or removing a rung is its module and one line here. `loop.rungs_off` turns any of them off by
name (ablations). Around the ladder, in this order for each round:

1. "settle" (settle.py): when the tests may change, value conflicts judged and the checks rewritten,
   before the round, with no model candidates.
2. the first rung of ORDER that applies (past functions the model stood by), then
3. "small edits" (rungs/small_edits.py): before a rung that asks about a function or a file, that
   function's one-edit copies, once per function and state; the rung's own round follows unless they move.
A green of a risky kind gets a second look (second_look.py, `loop.second_look`).
"""

from __future__ import annotations

from collections.abc import Collection, Sequence

from greenloop.agent.changes.testfiles import TestFiles
from greenloop.agent.changes.working_copy import WorkingCopy
from greenloop.agent.repair.approach import Approach
from greenloop.agent.repair.check_statements import Check
from greenloop.agent.repair.rung import LadderState, Rung
from greenloop.agent.repair.rungs import (
    anew,
    blocks,
    broken_file,
    checks,
    function,
    hotter,
    install,
    oneshot,
    properties,
    region,
    several,
    small_edits,
)
from greenloop.agent.repair.splice import Target
from greenloop.retrieval import Location
from greenloop_sandbox import TestReport

SETTLE = "settle"  # not a rung of ORDER: settle.py runs before each round (its name, for `loop.rungs_off`)

ORDER: tuple[Rung, ...] = (
    install.RUNG,  # a module is not installed: it, with the declared requirements; no model
    broken_file.RUNG,  # a source file does not load: that file whole
    properties.RUNG,  # a bound method compared: `@property` on it; no model
    function.RUNG,  # the top-ranked function, written again
    hotter.RUNG,  # the top function, sampled hotter
    anew.RUNG,  # the top function written anew from the tests, when it is most of its file
    region.RUNG,  # a long top function: the lines to change, in place of the whole def asked above
    blocks.RUNG,  # SEARCH/REPLACE blocks on the top file
    several.RUNG,  # the top-ranked functions together, several of them changed in one reply
    checks.RUNG,  # tests that may change: the failing checks, placed right after the first rung
)
ONESHOT: tuple[Rung, ...] = (oneshot.RUNG,)  # `loop.strategy = "oneshot"`: the baseline's one rung



def rung_names() -> tuple[str, ...]:
    """Every name `loop.rungs_off` may hold."""
    return (SETTLE, *(r.name for r in ORDER), small_edits.NAME)


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
    """The approaches for this state, in order: a round that brings nothing better moves one step on."""
    state = LadderState(locations, report, copy, tests, failing_tests, checks, tuple(declared))
    steps: list[Approach] = []
    for rung in ONESHOT if oneshot else ORDER:
        if rung.name not in off:
            steps = rung.place(steps, state)
    return steps
