"""Value conflicts settled before a round: judged, the checks rewritten, tested, step after step while each is better.

A test the model wrote with the code often holds several wrong expectations, and pytest stops
at the first: the generation bench's temperature test had six. One rewrite per round would spend
the run's three rounds on three of them. So before each round's model candidates, the checks the
request sides against (verdicts.py) are rewritten and tested as one candidate, no model asked;
when that is strictly better the state moves and the tests' next stopping places are judged, up
to MAX_STEPS times. A step that is not better ends it; the round then runs as before.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from greenloop.agent.changes.testfiles import TestFiles
from greenloop.agent.changes.working_copy import WorkingCopy
from greenloop.agent.event_sink import EventSink
from greenloop.agent.events import Message, RoundEnded, TestsRan
from greenloop.agent.repair.answers import expression, verdict
from greenloop.agent.repair.candidate_round import RoundInputs, RoundResult, run_round
from greenloop.agent.repair.check_statements import failing_checks
from greenloop.agent.repair.rungs.failing_tests import given_rung
from greenloop.agent.repair.value_conflict import Conflict, Judged, Side
from greenloop.agent.repair.verdicts import (
    VERDICT_TOKENS,
    conflicts,
    given_reply,
    interface,
    verdict_messages,
)
from greenloop.llm import ContextOverflow, LLMError
from greenloop_sandbox import TestReport

if TYPE_CHECKING:
    from greenloop.agent.orchestration.run_context import RunContext

MAX_STEPS = 6  # rewrites tested one after another in one iteration
# asked in turn until one decides: the value in plain words (decided 9 of 14 recorded conflicts, 1 wrong),
# then an expression only, computed by python (3 of the first's 5 undecided, right; alone, 8 right and
# none wrong), then the value or a formula (the other 2, right; alone it was wrong once, and in the
# bench it said kelvin_to_celsius(0) is 0). A long value (Conflict.long) is not asked for as itself
QUESTIONS = ("repair_verdict", "repair_verdict_expression", "repair_verdict_formula")


@dataclass(frozen=True)
class Settled:
    """Where settling ended: the report reached, its files (None: the state did not move), the verdicts given
    and the changes tested on the way (fingerprint -> what their tests gave)."""

    report: TestReport
    files: Mapping[str, bytes] | None
    judged: Judged
    tested: Mapping[int, str]


async def settle(context: RunContext, copy: WorkingCopy, report: TestReport,
                 judged: Mapping[tuple[str, str, str], Side | None], iteration: int, seen: Mapping[int, str],
                 events: EventSink) -> Settled:
    """Where the steps ended, their events (stamped) to `events`; `copy`, `judged` and `seen` stay as they are."""
    stamped = context.stamping(events)
    work, files = copy.fork(), None
    verdicts: Judged = {}
    tested: dict[int, str] = {}
    for _ in range(MAX_STEPS):
        sources = sources_of_tests(work, context.tests)
        checks = failing_checks(report, sources, context.tests)
        found = conflicts(checks, sources)
        await judge(context, found, {**judged, **verdicts}, verdicts, stamped, context.tests.spec_holds(report))
        given = given_reply(checks, {**judged, **verdicts}, found)
        if not given or context.over_budget() is not None:
            break
        inputs = RoundInputs(
            llm=context.ports.llm, sandbox=context.ports.sandbox, tests=context.tests, messages=[], count=1,
            temperature=0.0, next_seed=context.next_seed, over_budget=context.over_budget,
            test_timeout=context.settings.sandbox.test_timeout, iteration=iteration,
            subset=context.ports.sandbox.template.selects_tests, seen={**seen, **tested},
        )
        result = await run_round(inputs, given_rung(checks, given), work, report, stamped)
        tested.update(result.tested)
        stamped.emit(round_event(iteration, result))
        if not (result.moved and result.files is not None and result.report is not None):
            break
        work.restore(result.files)
        files, report = result.files, result.report
        stamped.emit(TestsRan(iteration=iteration, passed=report.passed, failed=report.failed,
                              errors=report.errors, skipped=report.skipped,
                              failures=[f.model_dump() for f in report.failures], duration=report.duration))
        if report.green:
            break
    return Settled(report, files, verdicts, tested)


async def judge(context: RunContext, found: list[Conflict], judged: Mapping[tuple[str, str, str], Side | None],
                verdicts: Judged, events: EventSink, spec_holds: bool = False) -> None:
    """Ask, for each value conflict not `judged` before, what the call must give (verdicts.py), each answer
    put in `verdicts`; one Message says what was decided. A failed or too long request decides nothing,
    except where the acceptance tests pass (`spec_holds`): the code does what the request states, so an
    undecided check written with it is the suspect, and the code's value stands."""
    asked = [c for c in dict((c.key, c) for c in found).values() if c.key not in judged]
    if not asked:
        return
    said: list[str] = []
    for conflict in asked:
        if context.over_budget() is not None:
            break
        side, how = None, ""
        # the value first; undecided, an expression, then the value or a formula. A long value: not itself
        for prompt in QUESTIONS[1:] if conflict.long else QUESTIONS:
            how = ""  # what the last question asked worked out, not an earlier one
            messages = verdict_messages(conflict, context.goal, interface(context.prompt_code.index, conflict),
                                        context.template, context.workspace, prompt=prompt)
            try:
                reply = await context.ports.llm.complete(messages, step="repair_verdict", max_tokens=VERDICT_TOKENS,
                                                         seed=context.next_seed(), temperature=0.0)
            except (LLMError, ContextOverflow) as exc:
                how = f" (not asked: {exc})"
                break
            computed = None
            if (formula := expression(reply, conflict)) is not None:  # worked out by python, not in the model's head
                computed = await context.ports.sandbox.compute(formula)
                how = f" (`{formula}` = {computed})" if computed is not None else f" (`{formula}` did not compute)"
            side = verdict(reply, conflict, computed)
            if side is not None:
                break
        if side is None and spec_holds:
            side, how = "code", how + " (undecided; the acceptance tests pass)"
        verdicts[conflict.key] = side
        said.append(f"`{conflict.call}`{how}: " + ("the code's value: the check is rewritten to expect it" if side == "code"
                                              else "the check's value: the code is told" if side == "test"
                                              else "neither value: nothing decided"))
    basis = "the request" if context.goal.strip() else "its name and docstring"
    events.emit(Message(text=f"Worked out what {len(said)} checked call(s) must give, by {basis}: " + "; ".join(said)))


def sources_of_tests(copy: WorkingCopy, tests: TestFiles) -> dict[str, str]:
    """The test files' texts, path -> text."""
    return {p: text for p in copy.paths() if tests.is_test(p) and (text := copy.read(p)) is not None}


def round_event(iteration: int, result: RoundResult) -> RoundEnded:
    best = result.best
    summary = ""
    if best is not None:
        summary = f"{best.passed} passed, {best.failed} failed, {best.errors} errors ({best.scope} tests)"
    return RoundEnded(
        iteration=iteration, approach=result.approach.label, why=result.approach.why, tried=len(result.tried),
        tested=sum(1 for t in result.tried if t.status == "tested"), best=best.index if best else None,
        best_summary=summary, moved=result.moved, ended=result.ended,
    )


class Settle:
    """Before each round, when the tests may change: value conflicts judged and the checks rewritten (above)."""

    name = "settle"
    when: Literal["before the round"] = "before the round"

    def applies(self, tests: TestFiles) -> bool:
        return tests.writable

    async def run(self, context: RunContext, copy: WorkingCopy, report: TestReport,
                  judged: Mapping[tuple[str, str, str], Side | None], iteration: int,
                  seen: Mapping[int, str], events: EventSink) -> Settled:
        return await settle(context, copy, report, judged, iteration, seen, events)


STEP = Settle()
