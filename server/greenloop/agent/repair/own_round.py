"""A small edit's green does not pre-empt the model: the model gets its own round on the same failure, with no hint.

On real projects most small-edit greens were wrong (7 of 7 on a held-out project, where a strong model gave
the right fix each time: docs/decisions/2026-12-done-means-right.md). So before a small edit's green is offered
as done, the model is asked about the same function as if no small edit had run. The small edit is done only
when an independent model candidate makes the same change (the same syntax tree, or the same outcome on every
call the failing tests make and on generated variants of them: behaviour.alike), or when the model's green is
worse by the rules (risky where the small edit is not, or refused by the gates). Otherwise the small edit is offered as
plausible, with the model's green beside it, or the model's green is offered when the rules choose it (the
one a second look would keep: second_look.choose), with the small edit beside it. A model round that does
not end within `loop.own_round_seconds` is stopped: the run says so, and the small edit is plausible.
"""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from dataclasses import replace
from typing import Any, Literal

from greenloop.agent.changes.working_copy import WorkingCopy
from greenloop.agent.event_sink import EventSink
from greenloop.agent.events import Message
from greenloop.agent.repair.approach import Approach
from greenloop.agent.repair.behaviour import alike
from greenloop.agent.repair.candidate_round import RoundInputs, RoundResult, run_round
from greenloop.agent.repair.overfit_shapes import Evidence
from greenloop.agent.repair.second_look import (
    Green,
    GreenContext,
    Judge,
    behaviour,
    choose,
    diff_of,
    green_of,
    shape,
)
from greenloop_sandbox import TestReport

NO_GREEN = "the model's own round on the same failure gave no green change to compare it with"
OTHER = "the model's own round made another change that passes too (shown beside it)"
ALIKE = ("the model's own round made a change written otherwise that gives the same outcome on every call the "
         "failing tests make and on variants of them")


async def own_round(inputs: RoundInputs, approach: Approach, copy: WorkingCopy, report: TestReport, small: Green,
                    seconds: float, events: EventSink, judge: Judge | None = None, evidence: Evidence | None = None
                    ) -> Green:
    """The model's round on `approach` (no hint), within `seconds`, its events to `events`; returns the Green to
    offer."""
    fork = copy.fork()
    fork.restore(small.result.files or {})
    made = fork.code_fingerprint()  # the small edit's change: a model candidate making it again is tested, not refused
    inputs = replace(inputs, seen={k: v for k, v in inputs.seen.items() if k != made})
    other = await _within(run_round(inputs, approach, copy, report, events), seconds)
    if other is None:  # out of time: the round was cancelled, its own `finally` stopped its tests
        events.emit(Message(text=f"The model's own round on the same failure did not end in {seconds:g} s "
                                 "(loop.own_round_seconds): the small edit is offered as plausible.", level="warning"))
        return replace(small, risk=small.risk or f"the model was too slow to check it against ({seconds:g} s)",
                       reason="the only green change: the model's own round did not end in time")
    model: Green | None = None
    if other.ended == "green":
        model = green_of(other, copy, evidence)
        if judge is not None:
            model = await judge(model)
    return await decide(inputs, copy, report, small, model)


async def decide(inputs: RoundInputs | None, copy: WorkingCopy, report: TestReport, small: Green,
                 model: Green | None) -> Green:
    """Which green to offer, the small edit's or the model's, and what is said of it (see the module docstring)."""
    if model is None:
        return replace(small, risk=small.risk or NO_GREEN, reason="the only green change")
    beside_model = (model.kind, diff_of(model))
    beside_small = (small.kind, diff_of(small))
    if shape(small, copy) == shape(model, copy):
        return replace(small, reason="the model's own round made the same change", beside=("", ""))
    if model.risk and not small.risk:
        return replace(small, reason=f"the model's green {model.risk}", beside=beside_model)
    if inputs is not None and not small.risk and await _alike(inputs, copy, report, small, model):
        return replace(small, reason=ALIKE, beside=("", ""))
    greens = [small, model]
    counts = await behaviour(inputs, greens, copy, report) if inputs is not None else None
    chosen = choose(greens, copy, counts)
    if chosen.result is model.result:
        return replace(chosen, beside=beside_small)
    return replace(chosen, risk=chosen.risk or OTHER, beside=beside_model)


async def _alike(inputs: RoundInputs, copy: WorkingCopy, report: TestReport, small: Green, model: Green) -> bool:
    """Whether the two greens behave alike on the failing tests' calls and their variants (False when unknown)."""
    failing = [f.test_id for f in report.failures if f.test_id]
    if not failing or not small.result.files or not model.result.files:
        return False
    async with inputs.sandbox.lease() as box:
        return await alike(box, copy.files(), model.result.files, small.result.files, failing) is True


async def _within(round_: Coroutine[Any, Any, RoundResult], seconds: float) -> RoundResult | None:
    """The round's result, or None when it did not end within `seconds` (it is cancelled, and awaited)."""
    try:
        async with asyncio.timeout(seconds) as limit:
            return await round_
    except TimeoutError:
        if not limit.expired():  # raised inside the round, not the time running out
            raise
        return None


class OwnRound:
    """On a small edit's green (`loop.own_round`): the model's own round on the same failure, when it may be
    asked and its round did not come first; otherwise the small edit is offered as plausible, and why."""

    name = ""
    when: Literal["on a green"] = "on a green"

    def applies(self, g: GreenContext) -> bool:
        return g.small and g.loop.own_round

    async def run(self, g: GreenContext, events: EventSink) -> Green:
        green = g.green
        if g.model_ran:  # the model's round came first, and gave no green
            return replace(green, risk=green.risk or NO_GREEN, reason="the only green change")
        if g.asked:
            events.emit(Message(text=f"A {green.kind} makes the tests pass: before it is offered, the model gets its "
                                     "own round on the same failure."))
            return await own_round(g.ask(g.approach), g.approach, g.copy, g.report, green, g.loop.own_round_seconds,
                                   events, g.judge, g.evidence)
        # no model round to compare with: the small edit is only plausible
        why = "the budget is spent" if g.budget_spent else f"no model is asked about {g.approach.label}"
        return replace(green, risk=green.risk or f"a small edit not checked against the model's own fix ({why})")


STEP = OwnRound()
