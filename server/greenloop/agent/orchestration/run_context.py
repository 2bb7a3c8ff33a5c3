"""RunContext: what one fix or improve run is given (settings, ports, workspace, ids), with its ledger of what changes."""

from __future__ import annotations

import secrets
import time
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

from greenloop.agent.changes.testfiles import TestFiles
from greenloop.agent.changes.working_copy import WorkingCopy
from greenloop.agent.event_sink import EventSink, Stamping
from greenloop.agent.events import BudgetUsed, Done, Outcome
from greenloop.agent.orchestration.budget import Budget
from greenloop.agent.orchestration.history import History
from greenloop.agent.orchestration.ledger import Ledger
from greenloop.agent.ports import Ports
from greenloop.agent.prompting.material import PromptCodeBuilder
from greenloop.agent.prompting.shows import RequestShows
from greenloop.settings import Settings

OFFERED = ("green", "no_tests")  # outcomes whose change set is offered to the person (tested and passing)


@dataclass(frozen=True)
class RunContext:
    """What one run is given (settings, ports, workspace, ids), frozen; what it changes is its `ledger`.

    Created by the session, shared with generation. `budget` (the clock) and `prompt_code` (retrieval's
    index and the coverage pass, cached by content) are the run's services."""

    settings: Settings
    ports: Ports
    workspace: Path
    template: str
    run_id: str
    started: float = field(default_factory=time.monotonic)
    goal: str = ""  # a generated project's request: its tests are the model's too, and may be wrong
    tests_writable: bool = False  # generation's own tests, an improve request about tests, loop.edit_tests
    # tests that stay the specification even when tests are writable: generation's acceptance tests (added
    # by generation once it writes them, before the fix loop starts)
    spec_tests: set[str] = field(default_factory=set)
    budget: Budget = field(init=False)
    prompt_code: PromptCodeBuilder = field(init=False)
    ledger: Ledger = field(init=False)

    def __post_init__(self) -> None:
        r, p = self.settings.retrieval, self.settings.prompt
        coverage = partial(self.ports.sandbox.run_spectrum, seconds=r.coverage_seconds) if r.coverage else None
        seed = self.settings.llm.seed if self.settings.llm.seed is not None else secrets.randbelow(2**31)
        object.__setattr__(self, "budget", Budget(self.settings.loop))
        object.__setattr__(self, "prompt_code", PromptCodeBuilder(
            use_retrieval=r.enabled, budget_tokens=r.context_tokens, top_k=r.top_k, coverage=coverage,
            shows=RequestShows(expected_actual=p.expected_actual, callee_docs=p.callee_docs,
                               executed_lines=p.executed_lines),
        ))
        object.__setattr__(self, "ledger", Ledger(seed_base=seed))

    @property
    def history(self) -> History:
        return self.ledger.history

    @property
    def packages(self) -> tuple[str, ...]:
        return self.ledger.packages

    @property
    def commands(self) -> tuple[str, ...]:
        return self.ledger.commands

    @property
    def tests(self) -> TestFiles:
        """Which files are tests, and whether this run may change them."""
        writable = self.tests_writable or self.settings.loop.edit_tests
        return TestFiles.of(self.ports.sandbox.template.language.test_globs, self.settings.loop.test_paths,
                            writable=writable, spec=self.spec_tests)

    def next_seed(self) -> int:
        return self.ledger.next_seed()

    def stamp(self, event: Any) -> Any:
        event.run_id, event.at = self.run_id, round(time.monotonic() - self.started, 3)
        return event

    def stamping(self, events: EventSink) -> EventSink:
        """`events`, each event stamped first (the steps below the strategies emit theirs unstamped)."""
        return Stamping(events, self.stamp)

    def tokens(self) -> int:
        usage = self.ports.llm.usage
        return int(usage.prompt_tokens + usage.completion_tokens)

    def over_budget(self) -> str | None:
        usage = self.ports.llm.usage
        return self.budget.exceeded(tokens=self.tokens(), cost=float(usage.cost), served=usage.served_seconds)

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
                served_seconds=round(u.served_seconds, 3),
            )
        )

    def done(self, copy: WorkingCopy, outcome: Outcome, summary: str, iterations: int, evidence: str = "") -> Done:
        u = self.ports.llm.usage
        ledger = self.ledger
        changes = copy.changes(list(ledger.packages), list(ledger.commands))
        if outcome == "green" and ledger.chosen[0]:
            kind, risk, reason = ledger.chosen
            other_kind, other_diff = ledger.beside
            changes = changes.model_copy(update={"kind": kind, "risk": "plausible" if risk else "", "risk_reason": risk,
                                                 "reason": reason, "other_kind": other_kind,
                                                 "other_diff": other_diff})
        changes.installs = list(ledger.installs)
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
                served_seconds=round(u.served_seconds, 3),
                evidence=evidence,
            )
        )
