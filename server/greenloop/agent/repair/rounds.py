"""The fix loop's candidate rounds: locate, pick an approach, run a round, move only when strictly better.

Each iteration is one round (`round.run_round`). Its `RoundResult` decides what happens: green
ends the run; better moves the state and starts the ladder again from the top; nothing better
keeps the state as it was and takes the next step of the ladder (the next location, hotter
sampling, the whole file, blocks), telling the model what the best failed candidate gave.
`stuck` is declared only when the ladder is spent. Before the model is asked about a function (once
per function and state), its small edits are tested (mutants.py), in the same iteration. A green whose
change is risky (risk.py) gets one more model round shown that change (second_look.py).
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator
from dataclasses import replace
from typing import TYPE_CHECKING

from greenloop.agent.changes.declared import declared_packages
from greenloop.agent.changes.working_copy import WorkingCopy
from greenloop.agent.events import Event, IterationStarted, LocationsFound, Message, TestsRan
from greenloop.agent.prompting.material import coverage_note
from greenloop.agent.repair.checks import failing_checks
from greenloop.agent.repair.guard_edits import builtin_exceptions
from greenloop.agent.repair.mutants import small_edits
from greenloop.agent.repair.prompts import failing_test_targets, repair_messages
from greenloop.agent.repair.round import RoundInputs, RoundResult, reply_limit, run_round
from greenloop.agent.repair.routes import Approach, ladder, stood_by_key, with_feedback
from greenloop.agent.repair.second_look import Green, green_of, hinted, second_look
from greenloop.agent.repair.settle import Judged, round_event, settle, sources_of_tests
from greenloop.agent.repair.splice import Target
from greenloop.agent.repair.verdicts import code_notes, conflicts
from greenloop.llm import LLMError
from greenloop.retrieval import Location, line_scores, parse_frames
from greenloop_sandbox import TestReport
from greenloop_sandbox.packages import package_name

if TYPE_CHECKING:
    from greenloop.agent.orchestration.run_state import RunState


async def candidate_rounds(
    state: RunState, copy: WorkingCopy, report: TestReport, test_ids: list[str] | None = None
) -> AsyncIterator[Event]:
    """Yield the rounds' events, ending with exactly one Done."""
    loop = state.settings.loop
    oneshot = loop.strategy == "oneshot"
    max_it = 1 if oneshot else loop.max_iterations
    step, spent = 0, list[str]()
    feedback: dict[bool, str] = {}  # the last failed round's feedback, per target kind (a test or code)
    seen: dict[int, str] = {}  # what each change tested so far gave
    stood_by: set[str] = set()  # functions the model gave back unchanged when told the tests fail
    judged: Judged = {}  # value conflicts: which side the request is on (settle.py)
    mutated: set[tuple[int, str]] = set()  # (state, function) whose small edits were tried
    for iteration in range(1, max_it + 1):
        if (why := state.over_budget()) is not None:
            yield state.done(copy, "budget", f"Stopped: {why}; {report.summary()}.", iteration - 1, why)
            return
        yield state.stamp(IterationStarted(iteration=iteration, max_iterations=max_it))
        measured = state.prompt_code.spectra.spectrum
        code = await state.prompt_code.build(copy, report.failures)
        if state.tests.writable and not oneshot:  # value conflicts first: rewritten checks, no model candidates
            before = report
            async for settled in settle(state, copy, report, judged, iteration, seen):
                if isinstance(settled, TestReport):
                    report = settled
                else:
                    yield settled
            if report is not before:  # the state moved: the ladder starts again, retrieval looks again
                step, feedback = 0, {}
                if report.green:
                    yield state.budget_event(iteration)
                    yield state.done(copy, "green", f"The tests pass ({report.summary()}).", iteration)
                    return
                code = await state.prompt_code.build(copy, report.failures)
        if (spectrum := state.prompt_code.spectra.spectrum) is not None and spectrum is not measured:
            yield state.stamp(Message(text=coverage_note(spectrum)))
        yield state.stamp(LocationsFound(iteration=iteration, locations=[loc.to_json() for loc in code.locations],
                                       context_tokens=code.tokens))
        spec = failing_test_targets(state.prompt_code.index, report, state.tests) if state.tests.writable else []
        sources = sources_of_tests(copy, state.tests) if state.tests.writable else {}
        checks = failing_checks(report, sources, state.tests) if state.tests.writable else []
        found = conflicts(checks, sources)
        notes = code_notes(found, judged)  # told to the code rungs: the checks the request agrees with
        upheld = [c.check for c in found if judged.get(c.key) == "test"]  # never asked to be rewritten to the code
        checks = [c for c in checks if c not in upheld]
        if upheld and not checks:  # every failing check is one the request sides with: no rung rewrites a test
            spec = []
        installed = {package_name(p) for p in state.packages}
        declared = [p for p in declared_packages(copy) if package_name(p) not in installed]
        steps = ladder(code.locations, report, copy, state.tests, oneshot=oneshot, failing_tests=spec, checks=checks,
                       declared=declared)
        if step == 0:  # a fresh ladder (the first, or after a move): what the model stood by is not asked first
            while step + 1 < len(steps) and _asks_again(steps[step], stood_by):
                step += 1
        while True:  # an approach whose request cannot fit the model's window is passed over, in this round
            if step >= len(steps):
                evidence = "; ".join(spent) or "no code outside the tests was found to change"
                yield state.done(copy, "stuck", f"Stopped: every approach was tried ({report.summary()}).",
                               iteration - 1, evidence)
                return
            approach = with_feedback(steps[step], feedback.get(steps[step].test, "") + ("" if steps[step].test else notes))
            messages = repair_messages(approach, copy, state.prompt_code.index, report, state.tests,
                                       template=state.template, workspace=state.workspace)
            llm = state.ports.llm
            limit = reply_limit(approach, copy, llm.settings.max_tokens)
            if await llm.fits(messages, step=f"repair_{approach.route}", max_tokens=limit):
                break
            spent.append(f"{approach.label} ({approach.why}): its request is longer than the model's context window")
            yield state.stamp(Message(text=f"Passed over {approach.label} ({approach.why}): its request is longer "
                                           "than the model's context window; the next approach is asked instead."))
            step += 1
        inputs = RoundInputs(
            llm=state.ports.llm, sandbox=state.ports.sandbox, tests=state.tests, messages=messages,
            count=1 if oneshot else loop.candidates, temperature=0.0 if oneshot else loop.candidate_temperature,
            next_seed=state.next_seed, over_budget=state.over_budget, test_timeout=state.settings.sandbox.test_timeout,
            iteration=iteration, subset=state.ports.sandbox.template.selects_tests, seen=seen, suite=test_ids,
        )
        result: RoundResult | None = None
        edits = _mutants_first(state, copy, approach, code.locations, mutated, report) if not oneshot else None
        if edits is not None:  # small edits first, tested without the model; the round below follows unless they move
            timed = replace(inputs, count=len(edits.replies), deadline=time.monotonic() + loop.mutation_seconds)
            async for item in run_round(timed, edits, copy, report):
                if isinstance(item, RoundResult):
                    result = item if item.moved or item.ended == "budget" else None
                    yield state.stamp(round_event(iteration, item))
                else:
                    yield state.stamp(item)
        try:
            if result is None:
                async for item in run_round(inputs, approach, copy, report):
                    if isinstance(item, RoundResult):
                        result = item
                    else:
                        yield state.stamp(item)
            if result is not None and result.ended == "green" and not oneshot:
                async for item in _kept_green(state, inputs, approach, copy, report, result):
                    if isinstance(item, RoundResult):
                        result = item
                    else:
                        yield state.stamp(item)
        except LLMError as exc:  # the model server failed for good: the state reached so far is kept
            yield state.stamp(Message(text=f"The model call failed: {exc}", level="error"))
            yield state.done(copy, "error", f"Stopped in round {iteration}: the model call failed; "
                           f"{report.summary()}.", iteration - 1, str(exc))
            return
        assert result is not None  # run_round always ends with its result
        if (cold := state.ports.sandbox.warm_notice()) is not None:  # said once per run
            yield state.stamp(Message(text=cold, level="info"))
        if _stood_by(result):
            stood_by.add(stood_by_key(approach.target))
        if result.approach.route != "mutants":  # the mutants' round was told already
            yield state.stamp(round_event(iteration, result))
        if result.moved and result.files is not None and result.report is not None:
            copy.restore(result.files)
            state.packages.extend(p for p in result.packages if p not in state.packages)
            state.installs.extend(result.installs)
            state.commands.extend(result.commands)
            report = result.report
            yield state.stamp(TestsRan(iteration=iteration, passed=report.passed, failed=report.failed,
                                     errors=report.errors, skipped=report.skipped,
                                     failures=[f.model_dump() for f in report.failures], duration=report.duration))
            step, feedback = 0, {}
        else:
            spent.append(f"round {iteration}: {approach.label} ({approach.why}): {_tally(result)}")
            step = step + 1
            feedback[approach.test] = _feedback_text(approach, result)  # a diff of code says nothing to a test rung
        yield state.budget_event(iteration)
        if result.ended == "green" or report.green:
            yield state.done(copy, "green", f"The tests pass ({report.summary()}).", iteration)
            return
        if result.ended == "budget":
            why = state.over_budget() or "budget"
            yield state.done(copy, "budget", f"Stopped: {why}; {report.summary()}.", iteration, why)
            return
    moved = copy.changed_paths() or state.packages or state.commands  # an install changes no file
    unchanged = "" if moved else " No candidate was better than the code as it was."
    yield state.done(copy, "budget", f"Stopped after {max_it} rounds; {report.summary()}.{unchanged}", max_it,
                   "max iterations reached")


async def _kept_green(state: RunState, inputs: RoundInputs, approach: Approach, copy: WorkingCopy, report: TestReport,
                      result: RoundResult) -> AsyncIterator[Event | RoundResult]:
    """A green round judged (risk.py); a risky one gets the model's second look (second_look.py). Yields the
    events, then the round to keep; the run state keeps its kind, risk and why it was chosen."""
    green = green_of(result, copy)
    if green.risk and approach.route in ("function", "file") and not approach.test \
            and state.settings.loop.second_look and state.over_budget() is None:
        yield Message(text=f"A {green.kind} makes the tests pass, but it {green.risk}: the model is asked once "
                           "more, shown that change.")
        again = hinted(approach, green)
        asked = replace(inputs, messages=repair_messages(again, copy, state.prompt_code.index, report, state.tests,
                                                         template=state.template, workspace=state.workspace))
        try:
            async for looked in second_look(asked, again, copy, report, green):
                if isinstance(looked, Green):
                    green = looked
                else:
                    yield looked
        except LLMError as exc:  # the green stays; only the second look is lost
            yield Message(text=f"The second look failed: {exc}", level="warning")
            green = replace(green, reason="the only green change: the model could not be asked again")
    state.chose(green.kind, green.risk, green.reason or "the first change that made the tests pass")
    yield green.result


def _mutants_first(state: RunState, copy: WorkingCopy, approach: Approach, locations: list[Location],
                   mutated: set[tuple[int, str]], report: TestReport) -> Approach | None:
    """The small edits of the function this round asks about, once per function and state (mutants.py);
    for a whole file (code that does not load: a `NameError`), of the top-ranked function in it. Edits
    on the lines the failures' tracebacks go through in it come first, then those on the lines the
    coverage pass finds most suspicious (run by the failing tests, not by the passing ones)."""
    if approach.test or state.settings.loop.mutants == 0 or approach.route not in ("function", "file"):
        return None
    target = approach.target
    if approach.route == "file":
        inside = next((loc for loc in locations if loc.path == target.path and loc.kind in ("function", "method")), None)
        if inside is None:
            return None
        target = Target(inside.path, inside.symbol, inside.kind, inside.start_line, inside.end_line)
    key = (copy.fingerprint(), stood_by_key(target))
    if key in mutated:
        return None
    mutated.add(key)
    paths = copy.paths()
    hot: set[int] = set()
    raised: dict[str, None] = {}
    for failure in report.failures:
        lines = {f.line for f in parse_frames(failure.traceback, paths)
                 if f.path == target.path and target.start_line <= f.line <= target.end_line}
        if lines:
            hot |= lines
            raised.update(dict.fromkeys(builtin_exceptions(f"{failure.message}\n{failure.traceback}")))
    spectrum = state.prompt_code.spectra.current(state.prompt_code.index)
    scores = line_scores(spectrum, target.path) if spectrum is not None else {}
    loop = state.settings.loop
    edits = small_edits(copy.read(target.path) or "", target, loop.mutants, hot, list(raised), scores, loop.edits_off)
    if not edits:
        return None
    return Approach("mutants", target, "small edits of the function, tested before the model is asked",
                    replies=tuple(r for r, _ in edits), kinds=tuple(k for _, k in edits))


def _asks_again(approach: Approach, stood_by: set[str]) -> bool:
    return approach.route == "function" and not approach.test and stood_by_key(approach.target) in stood_by


def _stood_by(result: RoundResult) -> bool:
    """The model stood by the code: at least half of a code round's candidates gave it back unchanged
    (twice each), and none was better."""
    approach, tried = result.approach, result.tried
    if approach.route != "function" or approach.test or result.moved or not tried:
        return False
    return 2 * sum(t.unchanged for t in tried) >= len(tried)


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
