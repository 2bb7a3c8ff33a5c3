"""Attempt history: a compact record of earlier iterations, and loop detection."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field

from greenloop.agent.plan import DebugPlan
from greenloop_sandbox import TestReport


def failure_signature(report: TestReport) -> str:
    """Which tests fail and the first line of why: equal signatures mean 'the same failure'."""
    parts = sorted(f"{f.test_id}|{(f.message or '').strip().splitlines()[:1]}" for f in report.failures)
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()[:16]


def plan_signature(plan: DebugPlan) -> str:
    """The plan's actions, whitespace-normalized: equal signatures mean 'the same edit'."""
    actions = [
        {k: " ".join(v.split()) if isinstance(v, str) else v for k, v in a.model_dump().items()} for a in plan.actions
    ]
    return hashlib.sha256(json.dumps(actions, sort_keys=True).encode()).hexdigest()[:16]


@dataclass
class Attempt:
    iteration: int
    failing: str  # summary of the failures it tried to fix
    diagnosis: str
    actions: list[str]  # one line per action
    outcome: str = ""  # what happened after: applied / rejected / tests then


@dataclass
class History:
    attempts: list[Attempt] = field(default_factory=list)
    _seen: dict[tuple[str, str], int] = field(default_factory=dict)

    def add(self, attempt: Attempt) -> None:
        self.attempts.append(attempt)

    def repeat_of(self, failure_sig: str, plan_sig: str, iteration: int) -> int | None:
        """The earlier iteration that saw this failure and tried this plan, else None (and remember it)."""
        key = (failure_sig, plan_sig)
        if key in self._seen:
            return self._seen[key]
        self._seen[key] = iteration
        return None

    def render(self, limit: int = 4) -> str:
        """The last `limit` attempts as prompt text ('' when there are none)."""
        if not self.attempts:
            return ""
        lines = ["", "## Earlier attempts (they did not make the tests pass; do not repeat them)"]
        for a in self.attempts[-limit:]:
            lines.append(f"- Iteration {a.iteration}: failing: {a.failing}")
            if a.diagnosis:
                lines.append(f"  diagnosis: {a.diagnosis[:400]}")
            lines.extend(f"  action: {line}" for line in a.actions)
            if a.outcome:
                lines.append(f"  result: {a.outcome}")
        return "\n".join(lines) + "\n"


def describe_action(action: object) -> str:
    """One line for the history: what the action did, with its edit in brief."""
    data = action.model_dump() if hasattr(action, "model_dump") else {}
    kind = data.get("kind", "?")
    if kind == "edit":
        return f"edit {data['path']}: {_brief(data['search'])} -> {_brief(data['replace'])}"
    if kind == "write":
        return f"write {data['path']} ({len(data['content'].splitlines())} lines)"
    if kind == "install":
        return f"install {' '.join(data['packages'])}"
    return f"run {data.get('command', '')}"


def _brief(text: str, limit: int = 120) -> str:
    flat = " ".join(text.split())
    return repr(flat if len(flat) <= limit else flat[: limit - 3] + "...")
