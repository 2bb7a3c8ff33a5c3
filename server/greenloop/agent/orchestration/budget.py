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

    def exceeded(self, *, tokens: int, cost: float) -> str | None:
        """Which budget is used up (a sentence), or None."""
        if tokens >= self.limits.max_tokens:
            return f"token budget used up: {tokens} of {self.limits.max_tokens} tokens"
        if self.limits.max_cost and cost >= self.limits.max_cost:
            return f"cost budget used up: ${cost:.4f} of ${self.limits.max_cost:.4f}"
        if self.elapsed() >= self.limits.max_seconds:
            return f"time budget used up: {self.elapsed():.0f} s of {self.limits.max_seconds:.0f} s"
        return None
