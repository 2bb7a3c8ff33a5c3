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
from collections.abc import AsyncIterator
from dataclasses import replace
from typing import Literal

from greenloop.agent.changes.working_copy import WorkingCopy
from greenloop.agent.events import Event, Message
from greenloop.agent.repair.approach import Approach
from greenloop.agent.repair.behaviour import alike
from greenloop.agent.repair.overfit_shapes import Evidence
from greenloop.agent.repair.round import RoundInputs, RoundResult, run_round
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
                    seconds: float, judge: Judge | None = None, evidence: Evidence | None = None
                    ) -> AsyncIterator[Event | Green]:
    """The model's round on `approach` (no hint), within `seconds`; yields its events, then the Green to offer."""
    other: RoundResult | None = None
    fork = copy.fork()
    fork.restore(small.result.files or {})
    made = fork.fingerprint()  # the small edit's change: a model candidate making it again is tested, not refused
    inputs = replace(inputs, seen={k: v for k, v in inputs.seen.items() if k != made})
    async for item in _within(run_round(inputs, approach, copy, report), seconds):
        if isinstance(item, RoundResult):
            other = item
        elif item is None:  # out of time
            yield Message(text=f"The model's own round on the same failure did not end in {seconds:g} s "
                               "(loop.own_round_seconds): the small edit is offered as plausible.", level="warning")
            yield replace(small, risk=small.risk or f"the model was too slow to check it against ({seconds:g} s)",
                          reason="the only green change: the model's own round did not end in time")
            return
        else:
            yield item
    model: Green | None = None
    if other is not None and other.ended == "green":
        model = green_of(other, copy, evidence)
        if judge is not None:
            model = await judge(model)
    yield await decide(inputs, copy, report, small, model)


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


async def _within(items: AsyncIterator[Event | RoundResult], seconds: float
                  ) -> AsyncIterator[Event | RoundResult | None]:
    """`items` as they come, until `seconds` have passed (then None, last, and the round is cancelled)."""
    queue: asyncio.Queue[tuple[Event | RoundResult | None, BaseException | None]] = asyncio.Queue()

    async def pump() -> None:
        try:
            async for item in items:
                await queue.put((item, None))
        except Exception as exc:  # handed to the reader, raised there
            await queue.put((None, exc))
            return
        await queue.put((None, None))

    task = asyncio.create_task(pump())
    loop = asyncio.get_running_loop()
    end = loop.time() + seconds
    try:
        while True:
            try:
                item, error = await asyncio.wait_for(queue.get(), timeout=max(0.0, end - loop.time()))
            except TimeoutError:
                yield None
                return
            if error is not None:
                raise error
            if item is None:
                return
            yield item
    finally:
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)


class OwnRound:
    """On a small edit's green (`loop.own_round`): the model's own round on the same failure, when it may be
    asked and its round did not come first; otherwise the small edit is offered as plausible, and why."""

    name = ""
    when: Literal["on a green"] = "on a green"

    def applies(self, g: GreenContext) -> bool:
        return g.small and g.loop.own_round

    async def run(self, g: GreenContext) -> AsyncIterator[Event | Green]:
        green = g.green
        if g.model_ran:  # the model's round came first, and gave no green
            yield replace(green, risk=green.risk or NO_GREEN, reason="the only green change")
        elif g.asked:
            yield Message(text=f"A {green.kind} makes the tests pass: before it is offered, the model gets its own "
                               "round on the same failure.")
            async for looked in own_round(g.ask(g.approach), g.approach, g.copy, g.report, green,
                                          g.loop.own_round_seconds, g.judge, g.evidence):
                yield looked
        else:  # no model round to compare with: the small edit is only plausible
            why = "the budget is spent" if g.budget_spent else f"no model is asked about {g.approach.label}"
            yield replace(green, risk=green.risk or f"a small edit not checked against the model's own fix ({why})")


STEP = OwnRound()
