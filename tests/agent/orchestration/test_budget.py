"""A run's budgets: the model seconds a memo served count against the time budget as if the model had answered."""

from __future__ import annotations

from greenloop.agent.orchestration.budget import Budget
from greenloop.settings import LoopSettings


def test_served_model_seconds_use_up_the_time_budget_as_live_ones_would() -> None:
    budget = Budget(LoopSettings(max_seconds=60.0))
    assert budget.exceeded(tokens=0, cost=0.0) is None
    assert budget.exceeded(tokens=0, cost=0.0, served=30.0) is None
    used = budget.exceeded(tokens=0, cost=0.0, served=75.0)
    assert used is not None and used.startswith("time budget used up: 75 s of 60 s")
    assert "75 s of them the model's, served from the memo" in used


def test_tokens_are_checked_before_time() -> None:
    budget = Budget(LoopSettings(max_seconds=60.0, max_tokens=100))
    assert budget.exceeded(tokens=100, cost=0.0, served=75.0) == "token budget used up: 100 of 100 tokens"
