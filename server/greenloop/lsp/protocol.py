"""Every greenloop-specific LSP name and payload type (wire.py reads and writes them).

Command arguments and custom method params are attrs classes in lsprotocol's
style (snake_case fields, camelCase on the wire).
"""

from __future__ import annotations

from typing import Any, Literal

import attrs
from lsprotocol import types

# Custom methods.
LOOP_EVENT = "greenloop/loopEvent"
FEEDBACK = "greenloop/feedback"
RUNS = "greenloop/runs"
DISCOVER_TESTS = "greenloop/discoverTests"
RUN_TEST_ITEMS = "greenloop/runTestItems"
TEST_RESULTS = "greenloop/testResults"
INTERPRETER_PACKAGES = "greenloop/interpreterPackages"

# workspace/executeCommand commands.
CMD_RUN_TESTS = "greenloop.runTests"
CMD_FIX = "greenloop.fixFailingTests"
CMD_IMPROVE = "greenloop.improve"
CMD_GENERATE = "greenloop.generateProject"
CMD_CANCEL = "greenloop.cancel"
COMMANDS = (CMD_RUN_TESTS, CMD_FIX, CMD_IMPROVE, CMD_GENERATE, CMD_CANCEL)

FIX_ALL_KIND = "source.fixAll.greenloop"
SOURCE = "greenloop"
BUSY_MESSAGE = "greenloop is already running a loop; cancel it first or wait"

VERDICT_QUESTION = "Did it run / work / perfect?"
# A package nobody declared (agent/install_gate.py): asked with window/showMessageRequest during a run.
INSTALL_QUESTION = "greenloop: install `{name}`, which this project does not declare?"
INSTALL_YES, INSTALL_NO = "Install", "Don't install"
# Button title -> the run store's verdict name.
VERDICTS = {
    "Perfect": "perfect",
    "Works": "works",
    "Runs, not right": "runs",
    "Didn't run": "failed",
    "Skip": "skip",
}


def _str(value: object) -> str:
    return str(value)


# ---- command arguments ---------------------------------------------------------------------------


@attrs.define
class RunTestsArgs:
    """`greenloop.runTests` takes `[{}]`."""


@attrs.define
class FixArgs:
    test_ids: list[str] | None = None


@attrs.define
class ImproveArgs:
    uri: str
    range: types.Range
    instruction: str


Template = Literal["python", "node", "rust"]


@attrs.define
class GenerateArgs:
    prompt: str
    template: Template
    out_dir: str
    small_steps: bool | None = None


@attrs.define
class CancelArgs:
    """`greenloop.cancel` takes `[{}]`."""


# ---- command results -----------------------------------------------------------------------------


@attrs.define
class RunTestsResult:
    passed: int
    failed: int
    errors: int
    skipped: int


@attrs.define
class LoopResult:
    """What fix and improve answer."""

    run_id: str
    outcome: str
    summary: str
    applied: bool


@attrs.define
class GenerateResult:
    run_id: str
    outcome: str
    summary: str
    out_dir: str
    files: list[str]


@attrs.define
class CancelResult:
    cancelled: int


# ---- custom methods ------------------------------------------------------------------------------


@attrs.define
class LoopEventParams:
    """`greenloop/loopEvent`: one agent event, flattened for a status line, plus the full event."""

    run_id: str
    kind: str
    text: str
    iteration: int | None = None
    max_iterations: int | None = None
    passed: int | None = None
    failed: int | None = None
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    cost: float | None = None
    outcome: str | None = None
    event: dict[str, Any] = attrs.field(factory=dict)


@attrs.define
class FeedbackParams:
    uri: str
    range: types.Range
    text: str
    thread_id: str


FeedbackStatus = Literal["applied", "declined", "no_change", "failed", "cancelled"]


@attrs.define
class FeedbackResult:
    thread_id: str
    status: FeedbackStatus
    message: str
    edit: types.WorkspaceEdit | None = None


@attrs.define
class RunsParams:
    limit: int = 20


@attrs.define
class RunSummary:
    id: str
    mode: str
    outcome: str | None
    started_at: float | None
    iterations: int | None
    cost: float | None


@attrs.define
class RunsResult:
    runs: list[RunSummary]


@attrs.define
class DiscoverTestsParams:
    """`greenloop/discoverTests` takes `{}`: the tests of the server's workspace folder."""


@attrs.define
class DiscoveredTest:
    """One test the runner collects: `id` is the runner's (`tests/test_x.py::TestK::test_p[1]`)."""

    id: str
    label: str
    uri: str | None
    line: int | None  # 0-based line of its definition, when found


@attrs.define
class TestProblem:
    """What kept tests from loading or running: a file that does not import, a run that failed whole."""

    id: str  # the file (`tests/test_x.py`) or `<collection>` / `<test run>`
    uri: str | None
    line: int | None
    message: str
    text: str


@attrs.define
class DiscoverTestsResult:
    folder_uri: str
    tests: list[DiscoveredTest]
    problems: list[TestProblem]
    message: str  # "" or what the Testing view says instead of tests ("no tests found ...")


@attrs.define
class RunTestItemsParams:
    """`greenloop/runTestItems`: run these ids (none: all) in the sandbox."""

    test_ids: list[str] | None = None


@attrs.define
class StackFrame:
    label: str
    uri: str
    line: int  # 0-based


TestOutcome = Literal["passed", "failed", "error", "skipped"]


@attrs.define
class TestResult:
    id: str
    outcome: TestOutcome
    duration: float  # seconds
    message: str
    expected: str | None
    actual: str | None
    uri: str | None  # where it failed (else its definition)
    line: int | None
    frames: list[StackFrame]
    output: str  # the failure's full text


@attrs.define
class TestResultsParams:
    """The answer of `greenloop/runTestItems`, and `greenloop/testResults` after any other test run."""

    folder_uri: str
    scope: list[str] | None  # the ids the run covered (null: every test)
    results: list[TestResult]
    missing: list[str]  # ids asked for that the workspace no longer has
    problems: list[TestProblem]


@attrs.define
class PackageVersion:
    name: str
    version: str


@attrs.define
class InterpreterPackagesParams:
    """What the editor's active interpreter has installed (`pip list --format json`, run by the extension with a
    time limit): only names and versions; `error` says why there is no listing (timed out, no pip)."""

    interpreter: str
    packages: list[PackageVersion]
    error: str | None = None


# JSON-RPC envelopes, so pygls (de)serialises our methods like lsprotocol's own.


@attrs.define
class LoopEventNotification:
    params: LoopEventParams
    method: str = LOOP_EVENT
    jsonrpc: str = "2.0"


@attrs.define
class FeedbackRequest:
    id: int | str
    params: FeedbackParams
    method: str = FEEDBACK
    jsonrpc: str = "2.0"


@attrs.define
class FeedbackResponse:
    id: int | str | None
    result: FeedbackResult | None = None
    jsonrpc: str = "2.0"


@attrs.define
class RunsRequest:
    id: int | str
    params: RunsParams | None = None
    method: str = RUNS
    jsonrpc: str = "2.0"


@attrs.define
class RunsResponse:
    id: int | str | None
    result: RunsResult | None = None
    jsonrpc: str = "2.0"


@attrs.define
class DiscoverTestsRequest:
    id: int | str
    params: DiscoverTestsParams | None = None
    method: str = DISCOVER_TESTS
    jsonrpc: str = "2.0"


@attrs.define
class DiscoverTestsResponse:
    id: int | str | None
    result: DiscoverTestsResult | None = None
    jsonrpc: str = "2.0"


@attrs.define
class RunTestItemsRequest:
    id: int | str
    params: RunTestItemsParams | None = None
    method: str = RUN_TEST_ITEMS
    jsonrpc: str = "2.0"


@attrs.define
class RunTestItemsResponse:
    id: int | str | None
    result: TestResultsParams | None = None
    jsonrpc: str = "2.0"


@attrs.define
class TestResultsNotification:
    params: TestResultsParams
    method: str = TEST_RESULTS
    jsonrpc: str = "2.0"


@attrs.define
class InterpreterPackagesNotification:
    params: InterpreterPackagesParams
    method: str = INTERPRETER_PACKAGES
    jsonrpc: str = "2.0"


# command -> (argument type, result type); the extension's protocol.ts is generated from these tables.
COMMAND_TYPES: dict[str, tuple[type, type]] = {
    CMD_RUN_TESTS: (RunTestsArgs, RunTestsResult),
    CMD_FIX: (FixArgs, LoopResult),
    CMD_IMPROVE: (ImproveArgs, LoopResult),
    CMD_GENERATE: (GenerateArgs, GenerateResult),
    CMD_CANCEL: (CancelArgs, CancelResult),
}

# method -> (message type, result type)
CUSTOM_METHOD_TYPES: dict[str, tuple[type, type | None]] = {
    LOOP_EVENT: (LoopEventNotification, None),
    FEEDBACK: (FeedbackRequest, FeedbackResponse),
    RUNS: (RunsRequest, RunsResponse),
    DISCOVER_TESTS: (DiscoverTestsRequest, DiscoverTestsResponse),
    RUN_TEST_ITEMS: (RunTestItemsRequest, RunTestItemsResponse),
    TEST_RESULTS: (TestResultsNotification, None),
    INTERPRETER_PACKAGES: (InterpreterPackagesNotification, None),
}
CLIENT_NOTIFICATIONS = frozenset({INTERPRETER_PACKAGES})  # notifications the extension sends (the rest: the server)

PAYLOADS: tuple[type, ...] = (  # every type wire.py reads and writes
    RunTestsArgs, FixArgs, ImproveArgs, GenerateArgs, CancelArgs,
    RunTestsResult, LoopResult, GenerateResult, CancelResult,
    LoopEventParams, FeedbackParams, FeedbackResult, RunsParams, RunSummary, RunsResult,
    LoopEventNotification, FeedbackRequest, FeedbackResponse, RunsRequest, RunsResponse,
    DiscoverTestsParams, DiscoveredTest, TestProblem, DiscoverTestsResult, RunTestItemsParams, StackFrame,
    TestResult, TestResultsParams, DiscoverTestsRequest, DiscoverTestsResponse, RunTestItemsRequest,
    RunTestItemsResponse, TestResultsNotification, PackageVersion, InterpreterPackagesParams,
    InterpreterPackagesNotification,
)  # fmt: skip


for _cls in PAYLOADS:
    attrs.resolve_types(_cls, globals(), {"types": types})
