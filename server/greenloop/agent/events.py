"""The one event model: everything a loop tells its front ends (CLI, LSP, run store)."""

from __future__ import annotations

from typing import Annotated, Any, ClassVar, Literal

from pydantic import AfterValidator, BaseModel, Field

from greenloop.agent.plan import DebugPlan

RunMode = Literal["fix", "improve", "generate"]
# "environment": the tests cannot run here as the project is (its environment, not its code; exit code 3)
Outcome = Literal["green", "stuck", "budget", "cancelled", "error", "no_tests", "already_green", "environment"]


OLD_ROUTES = {"mutants": "small_edits"}  # forms' names in records written before a rename -> their names now


def route_name(route: str) -> str:
    """A recorded form's name (`route`) as it is named now: old run stores and bench results keep the old one."""
    return OLD_ROUTES.get(route, route)


Route = Annotated[str, AfterValidator(route_name)]  # an event read from an old record gets the current name


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
    __test__: ClassVar[bool] = False  # not a pytest class
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


class InstalledPackage(BaseModel):
    """One distribution an install put into the sandbox: what, from which file, why, and where it was built."""

    name: str
    version: str
    filename: str = ""
    sha256: str = ""  # of the file the index served (for one built in the sandbox: its sdist)
    origin: Literal["declared", "mapped", "consented", "dependency"] = "dependency"
    built: Literal["index", "sandbox"] = "index"  # a wheel from the index, or built from its sdist in a container
    modules: list[str] = Field(default_factory=list)  # the top-level import names it provides

    def describe(self) -> str:
        where = "built in the sandbox from its sdist" if self.built == "sandbox" else "wheel from the index"
        return f"{self.name} {self.version} ({self.origin}; {where}; sha256 {self.sha256[:12]})"


class EnvironmentChanged(_Event):
    kind: Literal["environment_changed"] = "environment_changed"
    iteration: int
    action: Literal["install", "run"]
    detail: str
    ok: bool
    output: str = ""
    installed: list[InstalledPackage] = Field(default_factory=list)  # an install's distributions


class CandidateAsked(_Event):
    """A round asks the model for one candidate fix (or takes one without a model call: install)."""

    kind: Literal["candidate_asked"] = "candidate_asked"
    iteration: int
    index: int  # 1-based within the round
    of: int  # candidates the round may ask for
    route: Route  # the form's name: function | region | file | blocks | install | checks | small_edits | ...
    target: str
    seed: int | None = None
    temperature: float = 0.0


class CandidateTested(_Event):
    """What became of one candidate: rejected (with the reason) or tested (with the result)."""

    kind: Literal["candidate_tested"] = "candidate_tested"
    iteration: int
    index: int
    route: Route
    target: str
    seed: int | None = None
    temperature: float = 0.0
    prompt_hash: str = ""
    status: Literal["rejected", "tested"]
    reason: str = ""  # why it was rejected
    diff: str = ""  # against the state the round started from
    scope: Literal["", "failing", "all"] = ""  # which tests ran: the failing ones, or the whole suite
    passed: int = 0
    failed: int = 0
    errors: int = 0
    green: bool = False
    tokens: int = 0
    change_kind: str = ""  # a small edit's kind (small_edit_candidates.py) or "model"
    risk: str = ""  # why this green change is only plausible (risk.py); "" when nothing says so


class RoundEnded(_Event):
    """A round's decision: the best candidate and whether the loop moved to it."""

    kind: Literal["round_ended"] = "round_ended"
    iteration: int
    approach: str  # what the round tried, e.g. "`mean` in calc.py"
    why: str  # why that approach (first choice, next location, hotter, whole file)
    tried: int
    tested: int
    best: int | None = None  # index of the best candidate
    best_summary: str = ""  # its test result, e.g. "4 passed, 1 failed"
    moved: bool = False  # the state is now the best candidate's
    ended: Literal["green", "better", "nothing_better", "no_candidates", "budget"]


class BudgetUsed(_Event):
    kind: Literal["budget"] = "budget"
    iteration: int
    prompt_tokens: int
    completion_tokens: int
    cost: float
    seconds: float
    calls: int
    served_seconds: float = 0.0  # model seconds replies served from a memo cassette took when recorded


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
    installs: list[InstalledPackage] = Field(default_factory=list)  # what `packages` put in, file by file
    commands: list[str] = Field(default_factory=list)
    diff: str = ""
    kind: str = ""  # how the change that made the tests pass was made: a small edit's kind, or "model"
    risk: Literal["", "plausible"] = ""  # "plausible": the tests pass, but the change has a shape that overfits
    risk_reason: str = ""  # what to check ("returns None where `f` otherwise returns a bool")
    reason: str = ""  # why this change was chosen among the greens
    other_kind: str = ""  # another green change the run found and did not choose (a small edit, a model's reply)
    other_diff: str = ""  # its diff, offered beside this one

    @property
    def label(self) -> str:
        """What a front end says about the change: "" for one nothing flags."""
        if self.risk != "plausible":
            return ""
        other = f"; another green change ({self.other_kind}) is shown beside it" if self.other_kind else ""
        return f"plausible: the tests pass, check the change ({self.risk_reason}){other}"


class EnvironmentIssue(BaseModel):
    """Why a project's tests cannot run in the sandbox as it is: where, the runner's words, the class, the fix."""

    problem: Literal["removed_api", "test_tool", "dependency_api", "project_import", "no_wheel", "test_config"]
    file: str | None = None  # workspace-relative
    line: int | None = None
    message: str = ""  # the runner's own error line
    fix: str = ""  # what the user can do


class EnvironmentReady(_Event):
    """The environment step (before round 1, never a round): where the versions came from, and what it did."""

    kind: Literal["environment"] = "environment"
    summary: str  # "environment: 23 packages from uv.lock; pytest 8.3.5 (the project pins it)"
    lines: list[str] = Field(default_factory=list)  # each source tried, a fall-back's reason, each remedy
    source: str = ""  # "uv.lock", "requirements.txt", "the editor's interpreter", "declared ranges", ""
    packages: list[str] = Field(default_factory=list)  # the specs installed
    test_tool: str = ""  # "pytest 8.3.5"
    seconds: float = 0.0
    problem: EnvironmentIssue | None = None  # set when the step stops the run


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
    served_seconds: float = 0.0  # model seconds replies served from a memo cassette took when recorded
    evidence: str = ""  # why stuck / which budget / the error
    offers_changes: bool = False  # the change set holds something to accept (front ends offer it only then)


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
    | EnvironmentReady
    | CandidateAsked
    | CandidateTested
    | RoundEnded
    | BudgetUsed
    | Message
    | Done,
    Field(discriminator="kind"),
]
