"""The one event model: everything a loop tells its front ends (CLI, LSP, run store)."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, Field

from greenloop.agent.plan import DebugPlan

RunMode = Literal["fix", "improve", "generate"]
Outcome = Literal["green", "stuck", "budget", "cancelled", "error", "no_tests", "already_green"]


class _Event(BaseModel):
    run_id: str = ""
    at: float = 0.0  # seconds since the run started


class RunStarted(_Event):
    kind: Literal["run_started"] = "run_started"
    mode: RunMode
    workspace: str
    config: dict[str, Any] = Field(default_factory=dict)
    seed: int | None = None


class IterationStarted(_Event):
    kind: Literal["iteration_started"] = "iteration_started"
    iteration: int
    max_iterations: int


class TestsRan(_Event):
    kind: Literal["tests_ran"] = "tests_ran"
    iteration: int
    passed: int
    failed: int
    errors: int
    skipped: int
    failures: list[dict[str, Any]] = Field(default_factory=list)  # TestFailure dumps
    duration: float = 0.0


class LocationsFound(_Event):
    kind: Literal["locations"] = "locations"
    iteration: int
    locations: list[dict[str, Any]]  # retrieval's public {path, symbol, kind, start_line, end_line, score, why}
    context_tokens: int = 0


class DiagnosisDelta(_Event):
    """A streamed piece of the diagnosis text."""

    kind: Literal["diagnosis_delta"] = "diagnosis_delta"
    iteration: int
    text: str


class Diagnosis(_Event):
    kind: Literal["diagnosis"] = "diagnosis"
    iteration: int
    text: str


class PlanMade(_Event):
    kind: Literal["plan"] = "plan"
    iteration: int
    plan: DebugPlan


class EditApplied(_Event):
    kind: Literal["edit_applied"] = "edit_applied"
    iteration: int
    path: str
    action: str  # edit | write
    match: str = "exact"  # exact | whitespace | fuzzy | new_file


class EditRejected(_Event):
    kind: Literal["edit_rejected"] = "edit_rejected"
    iteration: int
    path: str
    reason: str


class EnvironmentChanged(_Event):
    kind: Literal["environment_changed"] = "environment_changed"
    iteration: int
    action: Literal["install", "run"]
    detail: str
    ok: bool
    output: str = ""


class BudgetUsed(_Event):
    kind: Literal["budget"] = "budget"
    iteration: int
    prompt_tokens: int
    completion_tokens: int
    cost: float
    seconds: float
    calls: int


class Message(_Event):
    """Progress text for humans (generation steps, notes)."""

    kind: Literal["message"] = "message"
    text: str
    level: Literal["info", "warning", "error"] = "info"


class FileChange(BaseModel):
    path: str
    before: str | None  # None: new file
    after: str | None  # None: deleted


class ChangeSet(BaseModel):
    """What a run would change: files plus environment; nothing is applied yet."""

    files: list[FileChange] = Field(default_factory=list)
    packages: list[str] = Field(default_factory=list)
    commands: list[str] = Field(default_factory=list)
    diff: str = ""


class Done(_Event):
    kind: Literal["done"] = "done"
    outcome: Outcome
    summary: str
    iterations: int = 0
    changes: ChangeSet = Field(default_factory=ChangeSet)
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost: float = 0.0
    seconds: float = 0.0
    evidence: str = ""  # why stuck / which budget / the error


Event = Annotated[
    RunStarted
    | IterationStarted
    | TestsRan
    | LocationsFound
    | DiagnosisDelta
    | Diagnosis
    | PlanMade
    | EditApplied
    | EditRejected
    | EnvironmentChanged
    | BudgetUsed
    | Message
    | Done,
    Field(discriminator="kind"),
]
