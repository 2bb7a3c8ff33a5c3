"""Budgets of one run: iterations, tokens, cost and wall time."""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from greenloop.settings import LoopSettings


@dataclass
class Budget:
    limits: LoopSettings
    started: float = field(default_factory=time.monotonic)

    def elapsed(self) -> float:
        return time.monotonic() - self.started

    def exceeded(self, *, tokens: int, cost: float, served: float = 0.0) -> str | None:
        """Which budget is used up (a sentence), or None. `served`: model seconds of replies a memo cassette
        served, charged as if the model had answered (a bench's configs then stop where a live run would)."""
        if tokens >= self.limits.max_tokens:
            return f"token budget used up: {tokens} of {self.limits.max_tokens} tokens"
        if self.limits.max_cost and cost >= self.limits.max_cost:
            return f"cost budget used up: ${cost:.4f} of ${self.limits.max_cost:.4f}"
        spent = self.elapsed() + served
        if spent >= self.limits.max_seconds:
            memo = f" ({served:.0f} s of them the model's, served from the memo)" if served else ""
            return f"time budget used up: {spent:.0f} s of {self.limits.max_seconds:.0f} s{memo}"
        return None
