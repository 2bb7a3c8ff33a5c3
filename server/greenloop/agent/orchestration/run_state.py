"""RunState: what one fix or improve run is given (settings, ports, workspace) and what it keeps (budget, history, seeds)."""

from __future__ import annotations

import secrets
import time
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

from greenloop.agent.changes.testfiles import TestFiles
from greenloop.agent.changes.working_copy import WorkingCopy
from greenloop.agent.events import BudgetUsed, Done, InstalledPackage, Outcome
from greenloop.agent.orchestration.budget import Budget
from greenloop.agent.orchestration.history import History
from greenloop.agent.ports import Ports
from greenloop.agent.prompting.material import PromptCodeBuilder
from greenloop.settings import Settings

OFFERED = ("green", "no_tests")  # outcomes whose change set is offered to the person (tested and passing)


@dataclass
class RunState:
    """Everything one run's loop needs; created by the session, shared with generation."""

    settings: Settings
    ports: Ports
    workspace: Path
    template: str
    run_id: str
    budget: Budget = field(init=False)
    history: History = field(default_factory=History)
    prompt_code: PromptCodeBuilder = field(init=False)
    packages: list[str] = field(default_factory=list)
    installs: list[InstalledPackage] = field(default_factory=list)  # what `packages` put in, file by file
    commands: list[str] = field(default_factory=list)
    started: float = field(default_factory=time.monotonic)
    goal: str = ""  # a generated project's request: its tests are the model's too, and may be wrong
    tests_writable: bool = False  # generation's own tests, an improve request about tests, loop.edit_tests
    chosen: tuple[str, str, str] = ("", "", "")  # the green change: its kind, why it is risky, why it was chosen
    _seeds: int = 0

    def __post_init__(self) -> None:
        self.budget = Budget(self.settings.loop)
        r = self.settings.retrieval
        coverage = partial(self.ports.sandbox.run_spectrum, seconds=r.coverage_seconds) if r.coverage else None
        self.prompt_code = PromptCodeBuilder(
            use_retrieval=r.enabled, budget_tokens=r.context_tokens, top_k=r.top_k, coverage=coverage
        )
        self._seed_base = self.settings.llm.seed if self.settings.llm.seed is not None else secrets.randbelow(2**31)

    @property
    def tests(self) -> TestFiles:
        """Which files are tests, and whether this run may change them."""
        writable = self.tests_writable or self.settings.loop.edit_tests
        return TestFiles.of(self.ports.sandbox.template.language.test_globs, self.settings.loop.test_paths, writable=writable)

    def next_seed(self) -> int:
        """A seed no other call of this run has used (candidates are sampled apart, and recorded)."""
        self._seeds += 1
        return self._seed_base + 1000 + self._seeds

    def chose(self, kind: str, risk: str, reason: str) -> None:
        """Keep what the change set says of the green change (risk.py, second_look.py)."""
        self.chosen = (kind, risk, reason)

    def stamp(self, event: Any) -> Any:
        event.run_id, event.at = self.run_id, round(time.monotonic() - self.started, 3)
        return event

    def tokens(self) -> int:
        usage = self.ports.llm.usage
        return int(usage.prompt_tokens + usage.completion_tokens)

    def over_budget(self) -> str | None:
        return self.budget.exceeded(tokens=self.tokens(), cost=float(self.ports.llm.usage.cost))

    def budget_event(self, iteration: int) -> BudgetUsed:
        u = self.ports.llm.usage
        return self.stamp(
            BudgetUsed(
                iteration=iteration,
                prompt_tokens=u.prompt_tokens,
                completion_tokens=u.completion_tokens,
                cost=u.cost,
                seconds=round(self.budget.elapsed(), 3),
                calls=u.calls,
            )
        )

    def done(self, copy: WorkingCopy, outcome: Outcome, summary: str, iterations: int, evidence: str = "") -> Done:
        u = self.ports.llm.usage
        changes = copy.changes(self.packages, self.commands)
        if outcome == "green" and self.chosen[0]:
            kind, risk, reason = self.chosen
            changes = changes.model_copy(update={"kind": kind, "risk": "plausible" if risk else "", "risk_reason": risk,
                                                 "reason": reason})
        changes.installs = list(self.installs)
        return self.stamp(
            Done(
                outcome=outcome,
                summary=summary,
                iterations=iterations,
                changes=changes,
                offers_changes=outcome in OFFERED and bool(changes.files or changes.packages or changes.commands),
                prompt_tokens=u.prompt_tokens,
                completion_tokens=u.completion_tokens,
                cost=u.cost,
                seconds=round(self.budget.elapsed(), 3),
                evidence=evidence,
            )
        )
