"""A risky green is not the end of the run: the model gets one more round, told of the green change, and the
loop keeps the best of the greens.

A small edit (or a reply) that turns the tests green with a shape known to overfit (risk.py) is shown to
the model as a hint ("this change makes the tests pass; write the fix the function needs"); its
candidates are tested as any round's; a reply that makes the hinted change again is no independent fix:
it shares its risk and is no vote for it (the 1.5B model copied a hinted `re.match(v, regex)`). Among the greens the loop
keeps, in order: the one whose shape is not risky (a return value of another type than the function's
other returns is a risk: risk.py), the one that independent candidates agree on (the same syntax tree:
the Agentless vote), the one that changes less of what the changed functions do on the calls the
passing tests make (behaviour.py; asked of the sandbox only when the rules before leave a tie), then
the smaller change. The records keep both.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, replace
from typing import Literal

from greenloop.agent.changes.working_copy import WorkingCopy
from greenloop.agent.event_sink import EventSink
from greenloop.agent.events import Message
from greenloop.agent.repair.approach import Approach, with_feedback
from greenloop.agent.repair.behaviour import changes_on_passing_calls
from greenloop.agent.repair.candidate_round import RoundInputs, RoundResult, run_round
from greenloop.agent.repair.overfit_shapes import Evidence
from greenloop.agent.repair.risk import normal_tree, risk
from greenloop.settings import LoopSettings
from greenloop_sandbox import TestReport

HINT = ("\n## A change that makes the tests pass\n```diff\n{diff}\n```\nThis change makes the tests pass, but it "
        "{reason}, so it may only hide the bug. Write the fix the function needs: it may be elsewhere in it.\n")


@dataclass(frozen=True)
class Green:
    """A round that turned the tests green, with the kind of its change and why that change is risky."""

    result: RoundResult
    kind: str
    risk: str
    reason: str = ""  # why it was chosen (set by `choose`)
    copied: bool = False  # the model's reply made the change it was shown: no vote of its own
    beside: tuple[str, str] = ("", "")  # another green change offered beside this one: its kind and diff


Judge = Callable[[Green], Awaitable[Green | None]]  # the gates (gates.py): a green kept, its risk added, or None


@dataclass(frozen=True)
class GreenContext:
    """What a step on a green (step.py's `OnGreen`) reads: the green that passed the gates, the round's approach,
    whether the model may be asked again, and how to ask it."""

    green: Green
    approach: Approach  # the round's approach (the model's, also when the green is a small edit's)
    small: bool  # the green is a small edit's
    model_ran: bool  # the model's round on it came first and gave no green (hangs-model-first)
    asked: bool  # the model may be asked again: the approach asks one, about code, and the budget is not spent
    budget_spent: bool
    loop: LoopSettings
    ask: Callable[[Approach], RoundInputs]  # the round's inputs with the messages that ask an approach
    copy: WorkingCopy
    report: TestReport
    judge: Judge  # the gates for a green of the step's own round
    evidence: Evidence


def diff_of(green: Green) -> str:
    return green.result.best.diff if green.result.best is not None else ""


def green_of(result: RoundResult, copy: WorkingCopy, evidence: Evidence | None = None) -> Green:
    """The round's green change judged: its kind (from the round's approach) and its risk (`evidence`: what
    the failure says, for the rules that read it: overfit_shapes.py)."""
    best = result.best
    kind = (best.change_kind or result.approach.kind_of(best.index)) if best is not None else "model"
    files = result.files or {}
    before = {p: copy.read(p) or "" for p in files if copy.read(p) != _text(files[p])}
    after = {p: _text(files[p]) for p in before}
    return Green(result, kind, risk(kind, before, after, evidence))


def hinted(approach: Approach, first: Green) -> Approach:
    """The approach again, told of the risky green change."""
    diff = first.result.best.diff if first.result.best is not None else ""
    return with_feedback(approach, HINT.format(diff=diff.rstrip()[:1500], reason=first.risk))


async def second_look(inputs: RoundInputs, hinted: Approach, copy: WorkingCopy, report: TestReport,
                      first: Green, events: EventSink, judge: Judge | None = None, evidence: Evidence | None = None
                      ) -> Green:
    """The model's round with the risky green as a hint (`inputs.messages` ask `hinted`), its events to
    `events`; returns the Green the loop keeps (a green the gates refuse, `judge`, is none)."""
    other = await run_round(inputs, hinted, copy, report, events)
    greens = [first]
    if other.ended == "green":
        looked: Green | None = green_of(other, copy, evidence)
        hint = diff_of(first)
        if looked is not None and other.best is not None and keeps(other.best.diff, hint):  # the hint copied
            looked = replace(looked, risk=looked.risk or f"keeps the change it was shown, which {first.risk}",
                             copied=True)
        if looked is not None and judge is not None:
            looked = await judge(looked)
        if looked is not None:
            greens.append(looked)
    chosen = choose(greens, copy, await behaviour(inputs, greens, copy, report))
    others = [g for g in greens if g.result is not chosen.result and not g.copied]
    return replace(chosen, beside=(others[0].kind, diff_of(others[0])) if others else ("", ""))


async def behaviour(inputs: RoundInputs, greens: list[Green], copy: WorkingCopy,
                     report: TestReport) -> list[int] | None:
    """Each green's changed outcomes on the passing tests' calls, when risk and votes leave greens tied."""
    shapes = [shape(g, copy) for g in greens]
    votes = _votes(greens, shapes)
    ranks = [(bool(g.risk), -votes[s]) for g, s in zip(greens, shapes, strict=True)]
    if ranks.count(min(ranks)) < 2:
        return None
    trees = [g.result.files or {} for g in greens]
    failing = [f.test_id for f in report.failures if f.test_id]
    async with inputs.sandbox.lease() as box:
        return await changes_on_passing_calls(box, copy.files(), trees, failing, inputs.suite or ())


def _votes(greens: list[Green], shapes: list[str]) -> Counter[str]:
    """How many independent candidates made each change: a reply that copied the hint is none."""
    return Counter(s for g, s in zip(greens, shapes, strict=True) if not g.copied)


def keeps(diff: str, hint: str) -> bool:
    """Every line the hint's diff removes and adds, the diff removes and adds too (a reply that copied it)."""
    def changed(text: str) -> set[str]:
        return {line[0] + line[1:].strip() for line in text.splitlines()
                if line[:1] in "+-" and not line.startswith(("+++", "---")) and line[1:].strip()}

    wanted = changed(hint)
    return bool(wanted) and wanted <= changed(diff)


def choose(greens: list[Green], copy: WorkingCopy, changes: list[int] | None = None) -> Green:
    """The green to keep: not risky, then agreed on by more candidates, then the one that changes fewer of the
    passing tests' calls (`changes`, per green, when known), then the smaller change."""
    shapes = [shape(g, copy) for g in greens]
    votes = _votes(greens, shapes)
    moved = changes or [0] * len(greens)

    def key(item: tuple[Green, str, int]) -> tuple[bool, int, int, int]:
        green, form, calls = item
        lines = green.result.best.diff_lines if green.result.best is not None else 0
        return bool(green.risk), -votes[form], calls, lines

    chosen, kept, calls = min(zip(greens, shapes, moved, strict=True), key=key)
    tied = [m for g, s, m in zip(greens, shapes, moved, strict=True)
            if (bool(g.risk), votes[s]) == (bool(chosen.risk), votes[kept])]
    if len(greens) == 1:
        why = "the only green change" + (": the model's round gave none" if chosen.risk else "")
    elif all(g.copied and s == kept for g, s in zip(greens, shapes, strict=True) if g is not chosen):
        why = "the only green change: the model's round gave back the change it was shown"
    elif votes[kept] > 1:
        why = f"{votes[kept]} independent candidates made this same change"
    elif not chosen.risk and any(g.risk for g in greens):
        why = "its shape is not one known to overfit; the other green " + next(g.risk for g in greens if g.risk)
    elif changes is not None and len(set(tied)) > 1:
        why = (f"it changes what the function gives on {calls} of the passing tests' calls, the other green "
               f"on {max(tied)}")
    else:
        why = "the smaller of the green changes"
    return Green(chosen.result, chosen.kind, chosen.risk, why)


def shape(green: Green, copy: WorkingCopy) -> str:
    """The change as the files' syntax trees (python) or texts: equal for the same change written twice."""
    files = green.result.files or {}
    changed = sorted(p for p in files if copy.read(p) != _text(files[p]))
    return "\n".join(f"{p}\n{(normal_tree(_text(files[p])) if p.endswith('.py') else None) or _text(files[p])}"
                     for p in changed)


def _text(data: bytes) -> str:
    return data.decode("utf-8", "replace")


class SecondLook:
    """On a green: a risky one gets the model's second look, shown that change (`loop.second_look`)."""

    name = ""
    when: Literal["on a green"] = "on a green"

    def applies(self, g: GreenContext) -> bool:
        return bool(g.green.risk) and g.approach.form.second_look and g.asked and g.loop.second_look

    async def run(self, g: GreenContext, events: EventSink) -> Green:
        events.emit(Message(text=f"A {g.green.kind} makes the tests pass, but it {g.green.risk}: the model is asked "
                                 "once more, shown that change."))
        again = hinted(g.approach, g.green)
        return await second_look(g.ask(again), again, g.copy, g.report, g.green, events, g.judge, g.evidence)


STEP = SecondLook()
