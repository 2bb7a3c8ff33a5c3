"""Agent events -> loopEvent params and progress lines."""

from __future__ import annotations

from greenloop.agent import events as ev
from greenloop.lsp.progress import loop_event_params, progress_message


def test_tests_ran_event_flattens_counts_and_keeps_the_event() -> None:
    event = ev.TestsRan(run_id="r1", iteration=2, passed=3, failed=1, errors=1, skipped=0)
    params = loop_event_params(event)
    assert (params.run_id, params.kind, params.iteration, params.passed, params.failed) == (
        "r1",
        "tests_ran",
        2,
        3,
        2,
    )
    assert params.event["kind"] == "tests_ran" and params.event["errors"] == 1
    assert "3 passed" in params.text


def test_budget_and_done_fields() -> None:
    budget = loop_event_params(
        ev.BudgetUsed(
            run_id="r", iteration=1, prompt_tokens=10, completion_tokens=5, cost=0.01, seconds=2, calls=2
        )
    )
    assert (budget.prompt_tokens, budget.completion_tokens, budget.cost) == (10, 5, 0.01)
    done = loop_event_params(ev.Done(run_id="r", outcome="green", summary="all pass", iterations=2))
    assert done.outcome == "green" and done.kind == "done" and done.iteration is None


def test_progress_lines_follow_the_iteration() -> None:
    state: dict[str, int] = {}
    assert progress_message(ev.IterationStarted(iteration=2, max_iterations=5), state) == "iteration 2/5"
    line = progress_message(ev.TestsRan(iteration=2, passed=1, failed=3, errors=0, skipped=0), state)
    assert line == "iteration 2/5: 3 failed"
    assert progress_message(ev.EditApplied(iteration=2, path="a.py", action="edit"), state) is None
