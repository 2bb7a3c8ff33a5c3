"""The candidate strategy's rounds: the ladder's next step -> its round -> the move (only when strictly better).

Each iteration is one round, driven by driver.py, and reads the ladder's entries (repair/ladder.py,
step.py) where they run: the steps before the round (settle), the next approach of the rungs (a fresh
ladder passes over what the model stood by; one whose request cannot fit the model's window is passed
over), the steps beside the model's round (small edits, before it or after it), the gates for a green
(kept_green.py), then the first step on a green that applies (second look, own round). Its `RoundResult`
is the move: better moves the state and starts the ladder again from the top; nothing better keeps the
state and takes the ladder's next approach, telling the model what the best failed candidate gave. The
round returns a `RoundEnd` value (green, stuck when the ladder is spent, cut by the budget) and emits its
events to the sink it is given (event_sink.py); the driver decides the run's end and `ending` words it.
"""

from __future__ import annotations

import time
from dataclasses import replace
from typing import TYPE_CHECKING

from greenloop.agent.changes.declared import declared_packages
from greenloop.agent.changes.working_copy import WorkingCopy
from greenloop.agent.event_sink import EventSink
from greenloop.agent.events import LocationsFound, Message, TestsRan
from greenloop.agent.orchestration import kept_green
from greenloop.agent.orchestration.driver import RoundEnd, Stop, Why
from greenloop.agent.prompting.material import coverage_note
from greenloop.agent.repair import ladder
from greenloop.agent.repair.approach import Approach, with_feedback
from greenloop.agent.repair.candidate_round import RoundInputs, RoundResult, run_round
from greenloop.agent.repair.check_statements import failing_checks
from greenloop.agent.repair.ladder_rung import LadderState
from greenloop.agent.repair.prompts import failing_test_targets, repair_messages
from greenloop.agent.repair.rungs.small_edits import SmallEditsForm
from greenloop.agent.repair.settle import round_event, sources_of_tests
from greenloop.agent.repair.step import AroundModel, BeforeRound
from greenloop.agent.repair.trim import Move
from greenloop.agent.repair.verdicts import code_notes, conflicts
from greenloop.errors import GreenloopError
from greenloop.retrieval import Location, line_scores
from greenloop_sandbox import TestReport
from greenloop_sandbox.packages import package_name

if TYPE_CHECKING:
    from greenloop.agent.orchestration.run_context import RunContext


class CandidateStrategy:
    """The candidate rounds (`loop.strategy = "candidates"`, and the one-shot baseline), driven by driver.py."""

    def __init__(self, context: RunContext, copy: WorkingCopy, test_ids: list[str] | None = None) -> None:
        loop = context.settings.loop
        if problem := ladder.unknown_rungs(loop.rungs_off):
            raise GreenloopError(problem)
        self.context, self.copy, self.test_ids = context, copy, test_ids
        context.ledger.new_loop()
        self.oneshot = loop.strategy == "oneshot"
        self.ladder = (ladder.BASELINE if self.oneshot else ladder.LADDER).without(loop.rungs_off)  # the order read
        self.max_iterations = 1 if self.oneshot else loop.max_iterations
        self.step, self.spent = 0, list[str]()  # the ladder's rung for this state; what the spent rungs gave
        self.feedback: dict[bool, str] = {}  # the last failed round's feedback, per target kind (a test or code)
        self.report: TestReport | None = None  # the state's tests as this strategy last moved them
        self.moves: list[Move] = []  # the rounds that moved the state and the files they moved to (trim.py)

    def ending(self, why: Why, iteration: int, report: TestReport, detail: str, events: EventSink) -> Stop:
        report = self.report or report
        if why == "green":
            return Stop("green", f"The tests pass ({report.summary()}).", iteration)
        if why == "stuck":  # the ladder is spent: this round asked nothing
            return Stop("stuck", f"Stopped: every approach was tried ({report.summary()}).", iteration - 1, detail)
        if why == "budget":
            return Stop("budget", f"Stopped: {detail}; {report.summary()}.", iteration, detail)
        if why == "model_error":
            return Stop("error", f"Stopped in round {iteration}: the model call failed; {report.summary()}.",
                        iteration - 1, detail)
        context = self.context
        moved = self.copy.changed_paths() or context.ledger.packages or context.ledger.commands  # an install: no file
        unchanged = "" if moved else " No candidate was better than the code as it was."
        return Stop("budget", f"Stopped after {iteration} rounds; {report.summary()}.{unchanged}", iteration, detail)

    async def next_round(self, iteration: int, report: TestReport, events: EventSink) -> RoundEnd:
        """One round, its events to `events`: settle, the ladder's approach, its round, the move."""
        context, copy = self.context, self.copy
        self.report = report
        measured = context.prompt_code.spectra.spectrum
        code = await context.prompt_code.build(copy, report.failures)
        for before in self.ladder.before_round:
            if not before.applies(context.tests):
                continue
            report = await self._before(before, iteration, report, events)  # no model candidates
            if report is not self.report:  # the state moved: the ladder starts again, retrieval looks again
                self.report, self.step, self.feedback = report, 0, {}
                if report.green:
                    events.emit(context.budget_event(iteration))
                    return RoundEnd(report, "green")
                code = await context.prompt_code.build(copy, report.failures)
        if (spectrum := context.prompt_code.spectra.spectrum) is not None and spectrum is not measured:
            events.emit(context.stamp(Message(text=coverage_note(spectrum))))
        events.emit(context.stamp(LocationsFound(iteration=iteration,
                                                 locations=[loc.to_json() for loc in code.locations],
                                                 context_tokens=code.tokens)))
        chosen = await self._approach(self._steps(report, code.locations), report, events)
        if chosen is None:  # the ladder is spent
            evidence = "; ".join(self.spent) or "no code outside the tests was found to change"
            return RoundEnd(report, "stuck", evidence)
        approach, messages = chosen
        result = await self._round(iteration, approach, messages, code.locations, report, events)
        return self._after(iteration, approach, result, report, events)

    async def _before(self, step: BeforeRound, iteration: int, report: TestReport, events: EventSink) -> TestReport:
        """A step before the round (settle.py), recorded in the ledger; returns the report reached."""
        ledger = self.context.ledger
        settled = await step.run(self.context, self.copy, report, ledger.judged, iteration, ledger.tested, events)
        ledger.record_judged(settled.judged)
        ledger.record_tested(settled.tested)
        if settled.files is not None:
            self.copy.restore(settled.files)
            self.moves.append(Move(iteration, dict(settled.files)))
        return settled.report

    def _steps(self, report: TestReport, locations: list[Location]) -> list[Approach]:
        """The ladder for this state (ladder.py), each approach with what the model is told of earlier rounds."""
        context, copy, ledger = self.context, self.copy, self.context.ledger
        writable = context.tests.writable
        spec = failing_test_targets(context.prompt_code.index, report, context.tests) if writable else []
        sources = sources_of_tests(copy, context.tests) if writable else {}
        checks = failing_checks(report, sources, context.tests) if writable else []
        found = conflicts(checks, sources)
        notes = code_notes(found, ledger.judged)  # told to the code rungs: the checks the request agrees with
        upheld = [c.check for c in found if ledger.judged.get(c.key) == "test"]  # never asked to be rewritten
        checks = [c for c in checks if c not in upheld]
        if upheld and not checks:  # every failing check is one the request sides with: no rung rewrites a test
            spec = []
        installed = {package_name(p) for p in ledger.packages}
        declared = [p for p in declared_packages(copy) if package_name(p) not in installed]
        steps = self.ladder.approaches(LadderState(locations, report, copy, context.tests, spec, checks,
                                                   tuple(declared)))
        return [with_feedback(s, self.feedback.get(s.test, "") + ("" if s.test else notes)) for s in steps]

    async def _approach(self, steps: list[Approach], report: TestReport, events: EventSink
                        ) -> tuple[Approach, list[dict[str, str]]] | None:
        """This round's approach and its messages (None when the ladder is spent). A fresh ladder skips
        what the model stood by; an approach whose request cannot fit the model's window is passed over."""
        context, copy = self.context, self.copy
        if self.step == 0:  # a fresh ladder (the first, or after a move): what the model stood by is not asked first
            while self.step + 1 < len(steps) and any(f.passes_over(steps[self.step], context.ledger.stood_by)
                                                     for f in self.ladder.fresh):
                self.step += 1
        while self.step < len(steps):
            approach = steps[self.step]
            messages = repair_messages(approach, copy, context.prompt_code.index, report, context.tests,
                                       template=context.template, workspace=context.workspace,
                                       shows=context.prompt_code.request_shows())
            llm = context.ports.llm
            limit = approach.form.reply_limit(approach, copy, llm.settings.max_tokens)
            if await llm.fits(messages, step=f"repair_{approach.route}", max_tokens=limit):
                return approach, messages
            self.spent.append(f"{approach.label} ({approach.why}): its request is longer than the model's context "
                              "window")
            events.emit(context.stamp(Message(text=f"Passed over {approach.label} ({approach.why}): its request is "
                                                   "longer than the model's context window; the next approach is asked "
                                                   "instead.")))
            self.step += 1
        return None

    async def _round(self, iteration: int, approach: Approach, messages: list[dict[str, str]],
                     locations: list[Location], report: TestReport, events: EventSink) -> RoundResult:
        """The result the state may move to, the round's events to `events`: the small edits first (the
        approach's own round follows unless they move), then a green through the gates and judged (kept_green.py)."""
        context, copy, oneshot = self.context, self.copy, self.oneshot
        stamped = context.stamping(events)
        loop, ledger = context.settings.loop, context.ledger
        inputs = RoundInputs(
            llm=context.ports.llm, sandbox=context.ports.sandbox, tests=context.tests, messages=messages,
            count=1 if oneshot else loop.candidates, temperature=0.0 if oneshot else loop.candidate_temperature,
            next_seed=context.next_seed, over_budget=context.over_budget,
            test_timeout=context.settings.sandbox.test_timeout, iteration=iteration,
            subset=context.ports.sandbox.template.selects_tests, seen=ledger.tested,
            suite=self.test_ids,
        )
        result: RoundResult | None = None
        judged = kept_green.Gated()  # what the gates made of this round's green (kept_green.py)
        beside, edits = self._beside_model(approach, locations, report)
        model_first = beside is not None and beside.when == "after the model"
        if edits is not None and not model_first:  # tested without the model
            first = await self._edits_round(iteration, inputs, edits, report, events)
            result = first if first.moved or first.ended == "budget" else None
            if result is not None and result.ended == "green":
                judged = await self._gated(inputs, report, result, events)
                result = None if judged.refused else result  # a small edit that broke a test: the model's turn
        if result is None:
            result = await run_round(inputs, approach, copy, report, stamped)
            ledger.record_tested(result.tested)
            if result.ended == "green" and not oneshot:
                judged = await self._gated(inputs, report, result, events)
                result = judged.refused or result
        told = False  # the kept round's event was emitted already
        if edits is not None and model_first and not result.moved and result.ended not in ("green", "budget"):
            stamped.emit(round_event(iteration, result))  # the model's round, told before the edits'
            told = True
            after = await self._edits_round(iteration, inputs, edits, report, events)
            result = after if after.moved or after.ended == "budget" else result
            if result.ended == "green":
                judged = await self._gated(inputs, report, result, events)
                result = judged.refused or result
        if judged.green is not None:
            result = await kept_green.kept(context, inputs, approach, copy, report, judged.green, self.ladder.on_green,
                                           stamped, model_ran=told, on_kept=self.ladder.on_kept, moves=self.moves)
        if result.approach is not edits and not told:  # the small edits' round was told already
            stamped.emit(round_event(iteration, result))
        return result

    async def _gated(self, inputs: RoundInputs, report: TestReport, result: RoundResult, events: EventSink
                     ) -> kept_green.Gated:
        """A green round through the gates (kept_green.gated), their events to `events`: the Green, or the round
        as nothing better (a refused one is recorded as what it gave, so a model proposing it again is told)."""
        judged = await kept_green.gated(self.context, inputs, self.copy, report, result, events)
        if judged.refused is not None and judged.refused.best is not None:
            fork = self.copy.fork()
            fork.restore(result.files or {})
            self.context.ledger.record_tested({fork.code_fingerprint(): judged.refused.best.feedback})
        return judged

    def _after(self, iteration: int, approach: Approach, result: RoundResult, report: TestReport,
               events: EventSink) -> RoundEnd:
        """The state moved to the round's best, or the ladder's next rung; returns the RoundEnd."""
        context, ledger = self.context, self.context.ledger
        if (cold := context.ports.sandbox.warm_notice()) is not None:  # runs went cold (warm.py): said once per run
            events.emit(context.stamp(Message(text=cold, level="info")))
        for fresh in self.ladder.fresh:
            if (key := fresh.keeps(result)) is not None:
                ledger.stand_by(key)
        if result.moved and result.files is not None and result.report is not None:
            self.copy.restore(result.files)
            self.moves.append(Move(iteration, dict(result.files), whole=result.approach.route != SmallEditsForm.route))
            ledger.environment_changed(result.packages, result.commands, result.installs)
            report = self.report = result.report
            events.emit(context.stamp(TestsRan(iteration=iteration, passed=report.passed, failed=report.failed,
                                               errors=report.errors, skipped=report.skipped,
                                               failures=[f.model_dump() for f in report.failures],
                                               duration=report.duration)))
            self.step, self.feedback = 0, {}
        else:
            self.spent.append(f"round {iteration}: {approach.label} ({approach.why}): {_tally(result)}")
            self.step += 1
            self.feedback[approach.test] = _feedback_text(approach, result)  # a diff of code says nothing to a test
        events.emit(context.budget_event(iteration))
        if result.ended == "green" or report.green:
            return RoundEnd(report, "green")
        if result.ended == "budget":  # its candidates were cut by the budget: the driver ends the run
            return RoundEnd(report, "budget")
        return RoundEnd(report)

    async def _edits_round(self, iteration: int, inputs: RoundInputs, edits: Approach, report: TestReport,
                           events: EventSink) -> RoundResult:
        """The small edits' round (no model, at most `loop.small_edits_seconds`), its events and its end told."""
        context = self.context
        stamped = context.stamping(events)
        timed = replace(inputs, count=edits.form.count(edits, inputs.count),
                        deadline=time.monotonic() + context.settings.loop.small_edits_seconds)
        result = await run_round(timed, edits, self.copy, report, stamped)
        context.ledger.record_tested(result.tested)
        stamped.emit(round_event(iteration, result))
        return result

    def _beside_model(self, approach: Approach, locations: list[Location], report: TestReport
                      ) -> tuple[AroundModel | None, Approach | None]:
        """The ladder's step beside the model's round of `approach` (small edits: before it, or after it), and its
        round's approach (None: no step, or none new in this state: rungs/small_edits.py)."""
        loop = self.context.settings.loop
        step = next((s for s in self.ladder.beside_model if s.applies(approach, report, loop)), None)
        if step is None:
            return None, None
        prompt_code = self.context.prompt_code

        def scores(path: str) -> dict[int, float]:
            spectrum = prompt_code.spectra.current(prompt_code.index)
            return line_scores(spectrum, path) if spectrum is not None else {}

        ledger = self.context.ledger
        edits, key = step.approach(approach, self.copy, report, locations, scores, loop, ledger.small_edits_tried)
        if key is not None:
            ledger.tried_small_edits(key)
        return step, edits


def _tally(result: RoundResult) -> str:
    rejected = [t.reason for t in result.tried if t.status == "rejected"]
    tested = sum(1 for t in result.tried if t.status == "tested")
    text = f"{len(result.tried)} candidate(s), {tested} tested, none better"
    return text + (f"; rejected: {rejected[0]}" if rejected else "")


def _feedback_text(approach: Approach, result: RoundResult) -> str:
    """What the next round is told: the best failed attempt's change and what the tests then said."""
    best = result.best
    if best is None:
        reasons = "; ".join(dict.fromkeys(t.reason for t in result.tried if t.reason))[:600]
        return f"\n## Earlier attempts\nEarlier replies could not be used: {reasons}\n" if reasons else ""
    diff = best.diff if len(best.diff) < 1500 else best.diff[:1500] + "\n..."
    return (f"\n## An earlier attempt (it did not work)\n```diff\n{diff.rstrip()}\n```\n"
            f"The tests then said: {best.feedback}\nDo something different.\n")
