"""Every event gets one plain line, worded once for all front ends; the terminal never reads it as markup."""

from __future__ import annotations

import io
import typing

from rich.console import Console

from greenloop.agent import events as ev
from greenloop.agent.orchestration.describe import describe, is_small_edit, tone
from greenloop.agent.plan import DebugPlan
from greenloop.cli.progress import EventPrinter
from greenloop.lsp.progress import loop_event_params

TRICKY = "src/[id]/page.py"  # brackets in a path, as Next.js-style routes have
CODE = "return numbers[i] [bold] [/x]"  # code in a rejection's reason: markup look-alikes, one unbalanced


def one_of_each() -> list[ev.Event]:
    plan = DebugPlan.model_validate(
        {"diagnosis": "d", "actions": [{"kind": "write", "path": "a.py", "content": ""}]}
    )
    return [
        ev.RunStarted(mode="fix", workspace="/ws", seed=7),
        ev.IterationStarted(iteration=1, max_iterations=3),
        ev.TestsRan(iteration=1, passed=2, failed=1, errors=0, skipped=0),
        ev.LocationsFound(iteration=1, locations=[{"path": TRICKY, "symbol": "f"}], context_tokens=120),
        ev.DiagnosisDelta(iteration=1, text="the index "),
        ev.Diagnosis(iteration=1, text="the index is off by one\nmore"),
        ev.PlanMade(iteration=1, plan=plan),
        ev.EditApplied(iteration=1, path=TRICKY, action="edit", match="fuzzy"),
        ev.EditRejected(iteration=1, path="a.py", reason=f"SEARCH not found; did you mean:\n{CODE}"),
        ev.EditRejected(iteration=1, path="b.py", reason=CODE),
        ev.EnvironmentChanged(iteration=1, action="install", detail="requests[socks]", ok=False),
        ev.BudgetUsed(iteration=1, prompt_tokens=100, completion_tokens=20, cost=0.0, seconds=3.4, calls=2),
        ev.Message(text=f"Plan: 2 files ({TRICKY})", level="warning"),
        ev.CandidateAsked(iteration=1, index=2, of=4, route="function", target=f"`f` in {TRICKY}", seed=9,
                          temperature=0.8),
        ev.CandidateTested(iteration=1, index=2, route="function", target="f", status="rejected",
                           reason=f"the reply defines `g`, not `f`\n{CODE}"),
        ev.RoundEnded(iteration=1, approach=f"`f` in {TRICKY}", why="the top-ranked function", tried=4, tested=3,
                      best=3, best_summary="2 passed, 1 failed, 0 errors (all tests)", ended="nothing_better"),
        ev.EnvironmentReady(summary="environment: 2 package(s) from uv.lock; pytest 8.3.5 (the project pins it)",
                            lines=["poetry.lock: not used, it does not parse"]),
        ev.Done(outcome="stuck", summary="same failure twice", evidence=CODE),
    ]


def test_every_event_kind_has_a_line_and_a_tone() -> None:
    events = one_of_each()
    kinds = {cls.model_fields["kind"].default for cls in typing.get_args(typing.get_args(ev.Event)[0])}
    assert {e.kind for e in events} == kinds  # no kind left out of the sample
    lines = {e.kind: describe(e) for e in events}
    assert lines["run_started"] == "greenloop fix /ws (seed 7)"
    assert lines["tests_ran"] == "tests: 2 passed, 1 failed, 0 errors"
    assert lines["locations"] == f"code: {TRICKY}:f (120 tokens of context)"
    assert lines["diagnosis"] == "diagnosis: the index is off by one"
    assert lines["plan"] == "plan: 1 action"
    assert lines["edit_applied"] == f"applied edit {TRICKY} (fuzzy)"
    assert describe(events[8]) == "rejected a.py: SEARCH not found; did you mean:"  # one line only
    assert lines["environment_changed"] == "install requests[socks]: failed"
    assert lines["budget"] == "120 tokens, $0.0000, 3 s"
    assert lines["environment"] == "environment: 2 package(s) from uv.lock; pytest 8.3.5 (the project pins it)"
    assert tone(events[-2]) == "detail"  # the step went through; "bad" when it stops the run
    assert [tone(e) for e in events[1:3]] == ["heading", "bad"]
    assert (tone(events[10]), tone(events[12]), tone(events[-1])) == ("bad", "warning", "warning")
    assert lines["candidate_asked"] == f"candidate 2/4: function `f` in {TRICKY} (temperature 0.8, seed 9)"
    assert lines["candidate_tested"] == "candidate 2 rejected: the reply defines `g`, not `f`"  # one line
    whole_file = ev.CandidateAsked(iteration=1, index=1, of=4, route="file", target="file a.py", temperature=0.0)
    assert describe(whole_file) == "candidate 1/4: file a.py (temperature 0)"  # the route is said once
    edit = ev.CandidateAsked(iteration=1, index=3, of=60, route="mutants", target="small edits of `f` in a.py",
                             temperature=0.0)
    assert describe(edit) == "candidate 3/60: small edits of `f` in a.py"  # no model: no temperature to tell
    assert lines["round_ended"] == (
        f"round 1 (`f` in {TRICKY}): 3/4 tested, best: candidate 3, 2 passed, 1 failed, 0 errors (all tests); "
        "nothing better; state kept")


def test_the_terminal_prints_event_text_verbatim() -> None:
    out = io.StringIO()
    printer = EventPrinter(Console(file=out, width=200, force_terminal=False, color_system=None))
    events = one_of_each()
    for event in events[:-1]:
        printer(event)
    printer.summary(typing.cast(ev.Done, events[-1]))
    text = out.getvalue()
    for expected in (
        f"  code: {TRICKY}:f",
        f"  applied edit {TRICKY} (fuzzy)",
        f"  rejected b.py: {CODE}",
        "  install requests[socks]: failed",
        f"  Plan: 2 files ({TRICKY})",
        "  diagnosis: the index \n",  # streamed, then not repeated
        CODE,  # the Done evidence
    ):
        assert expected in text, (expected, text)
    assert "diagnosis: the index is off by one" not in text


def test_editor_and_terminal_word_events_alike() -> None:
    for event in one_of_each():
        if event.kind != "diagnosis_delta":
            assert loop_event_params(event).text == describe(event)


def test_the_terminal_shows_small_edits_as_one_line_and_their_progress() -> None:
    out = io.StringIO()
    printer = EventPrinter(Console(file=out, width=200, force_terminal=False, color_system=None))
    target = "small edits of `average` in calculator.py"
    passing = [0, 1, 1, 0, 2, 6]
    for index in range(1, len(passing) + 1):
        printer(ev.CandidateAsked(iteration=1, index=index, of=6, route="mutants", target=target))
    for index, passed in enumerate(passing, start=1):
        printer(ev.CandidateTested(iteration=1, index=index, route="mutants", target=target, status="tested",
                                   scope="all" if passed == 6 else "failing", passed=passed,
                                   failed=2 - passed if passed < 6 else 0, green=passed == 6))
    printer(ev.CandidateTested(iteration=1, index=7, route="mutants", target=target, status="rejected",
                               reason="does not parse"))
    printer(ev.CandidateAsked(iteration=2, index=1, of=4, route="function", target="`average`", seed=1))
    lines = out.getvalue().splitlines()
    assert lines == [
        f"  {target}: up to 6, tested before the model is asked",
        "  candidate 2: 1/2 passing (the failing tests)",
        "  candidate 5: 2/2 passing (the failing tests)",
        "  candidate 6: 6/6 passing (all tests) - green",
        "  candidate 1/4: function `average` (temperature 0, seed 1)",
    ]


def test_the_terminal_shows_the_other_green_change_beside_the_one_offered() -> None:
    out = io.StringIO()
    printer = EventPrinter(Console(file=out, width=200, force_terminal=False, color_system=None))
    changes = ev.ChangeSet(diff="-    return a > b\n+    return a >= b\n", kind="comparison", risk="plausible",
                           risk_reason="the model's own round made another change", other_kind="model",
                           other_diff="-    return a > b\n+    return not a < b\n")
    printer.summary(ev.Done(outcome="green", summary="The tests pass.", changes=changes))
    text = out.getvalue()
    assert "another green change (model) is shown beside it" in text
    assert text.index("another change that passes (model), not applied:") < text.index("+    return not a < b")


def test_an_old_record_of_a_small_edit_reads_under_the_routes_name_now() -> None:
    """Run stores and bench results written before the rename say route "mutants": read, it is "small_edits"."""
    stored = {"kind": "candidate_tested", "iteration": 1, "index": 2, "route": "mutants", "target": "small edits of `f`",
              "status": "tested"}
    read = ev.CandidateTested.model_validate(stored)
    assert read.route == "small_edits" and is_small_edit(read)
    assert ev.route_name("mutants") == "small_edits" and ev.route_name("function") == "function"
