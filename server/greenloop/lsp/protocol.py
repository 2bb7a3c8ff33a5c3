"""Every greenloop-specific LSP name and payload type, plus the converter that reads and writes them.

Command arguments and custom method params are attrs classes in lsprotocol's
style (snake_case fields, camelCase on the wire). They are structured with a
strict converter: a string where a list of strings belongs is an error, not a
list of characters.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Literal, TypeVar

import attrs
import cattrs
from cattrs.gen import make_dict_structure_fn, make_dict_unstructure_fn, override
from lsprotocol import converters, types
from pygls.exceptions import JsonRpcInvalidParams
from pygls.protocol import default_converter

# Custom methods.
LOOP_EVENT = "greenloop/loopEvent"
FEEDBACK = "greenloop/feedback"
RUNS = "greenloop/runs"
DISCOVER_TESTS = "greenloop/discoverTests"
RUN_TEST_ITEMS = "greenloop/runTestItems"
TEST_RESULTS = "greenloop/testResults"

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
}

_PAYLOADS: tuple[type, ...] = (
    RunTestsArgs, FixArgs, ImproveArgs, GenerateArgs, CancelArgs,
    RunTestsResult, LoopResult, GenerateResult, CancelResult,
    LoopEventParams, FeedbackParams, FeedbackResult, RunsParams, RunSummary, RunsResult,
    LoopEventNotification, FeedbackRequest, FeedbackResponse, RunsRequest, RunsResponse,
    DiscoverTestsParams, DiscoveredTest, TestProblem, DiscoverTestsResult, RunTestItemsParams, StackFrame,
    TestResult, TestResultsParams, DiscoverTestsRequest, DiscoverTestsResponse, RunTestItemsRequest,
    RunTestItemsResponse, TestResultsNotification,
)  # fmt: skip


def camel(name: str) -> str:
    head, *rest = name.rstrip("_").split("_")
    return head + "".join(part.title() for part in rest)


def _strict_primitives(converter: cattrs.Converter) -> None:
    def exact(kind: type, label: str) -> Callable[[Any, type], Any]:
        def hook(value: Any, _: type) -> Any:
            ok = isinstance(value, kind) and not (kind is not bool and isinstance(value, bool))
            if kind is float and isinstance(value, int) and not isinstance(value, bool):
                return float(value)
            if not ok:
                raise TypeError(f"expected {label}, got {type(value).__name__}")
            return value

        return hook

    converter.register_structure_hook(str, exact(str, "a string"))
    converter.register_structure_hook(int, exact(int, "an integer"))
    converter.register_structure_hook(float, exact(float, "a number"))
    converter.register_structure_hook(bool, exact(bool, "a boolean"))

    def string_list(value: Any, _: type) -> list[str]:
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise TypeError("expected a list of strings")
        return list(value)

    converter.register_structure_hook_func(lambda t: t == list[str], string_list)


def _strict_converter() -> cattrs.Converter:
    strict = converters.get_converter(cattrs.Converter(forbid_extra_keys=False))
    _strict_primitives(strict)
    return strict


_STRICT = _strict_converter()


def _register(converter: cattrs.Converter, cls: type) -> None:
    """camelCase both ways; nulls are kept when writing (the extension reads `null`, not absence)."""
    names = {a.name: override(rename=camel(a.name)) for a in attrs.fields(cls)}
    converter.register_unstructure_hook(cls, make_dict_unstructure_fn(cls, converter, **names))  # type: ignore[arg-type]
    converter.register_structure_hook(cls, make_dict_structure_fn(cls, _STRICT, **names))  # type: ignore[arg-type]
    _STRICT.register_structure_hook(cls, make_dict_structure_fn(cls, _STRICT, **names))  # type: ignore[arg-type]


for _cls in _PAYLOADS:
    attrs.resolve_types(_cls, globals(), {"types": types})


def make_converter() -> cattrs.Converter:
    """pygls' converter plus hooks for every greenloop payload type."""
    converter = default_converter()
    for cls in _PAYLOADS:
        _register(converter, cls)
    return converter


_CONVERTER = make_converter()
T = TypeVar("T")


def to_json(value: Any) -> Any:
    """A payload as JSON-ready data (camelCase keys)."""
    return _CONVERTER.unstructure(value)


def parse(kind: type[T], value: Any, *, what: str) -> T:
    """Structure one JSON object into `kind`, or raise InvalidParams saying what is wrong."""
    if not isinstance(value, dict):
        raise JsonRpcInvalidParams(f"{what}: expected a JSON object, got {_json_type(value)}")
    try:
        return _STRICT.structure(value, kind)
    except cattrs.ClassValidationError as exc:
        problems = "; ".join(_humane(line) for line in cattrs.transform_error(exc, path=""))
        raise JsonRpcInvalidParams(f"{what}: {problems}") from exc
    except (TypeError, ValueError, KeyError) as exc:
        raise JsonRpcInvalidParams(f"{what}: {exc}") from exc


def parse_command_args(kind: type[T], command: str, arguments: Sequence[Any]) -> T:
    """`workspace/executeCommand` arguments: exactly one JSON object (none counts as `{}`)."""
    if not arguments:
        return parse(kind, {}, what=command)
    if len(arguments) != 1:
        raise JsonRpcInvalidParams(
            f"{command}: expected one argument (a JSON object in a list), got {len(arguments)}"
        )
    return parse(kind, arguments[0], what=command)


def _humane(line: str) -> str:
    """cattrs' 'required field missing @ $.outDir' -> 'outDir: required field missing'."""
    text, _, where = line.rpartition(" @ ")
    where = ".".join(camel(part) for part in where.lstrip("$").lstrip(".").split("."))
    if "not in literal" in text:  # "unknown error (java not in literal typing.Literal['python', ...])"
        allowed = text.partition("Literal[")[2].rstrip("])").replace("'", "")
        text = f"must be one of {allowed}"
    elif text.startswith("invalid value for type, expected "):
        text = "expected " + text.removeprefix("invalid value for type, expected ").replace("str", "string")
    return f"{where}: {text}" if where and text else line


def _json_type(value: Any) -> str:
    if value is None:
        return "null"
    return {list: "an array", str: "a string", bool: "a boolean", int: "a number", float: "a number"}.get(
        type(value), type(value).__name__
    )
