"""The one settings model: every greenloop parameter, its default and meaning.

Sources, lowest to highest priority: defaults, the user's `config.toml`
(platformdirs' config dir), `greenloop.toml` or `[tool.greenloop]` in the
workspace's `pyproject.toml` (or the file named by `--config`), `GREENLOOP_*`
environment variables (nested with `__`, e.g. `GREENLOOP_LLM__MODEL`), then
explicit overrides (CLI flags, the editor's configuration); see `settings_sources`.
`docs/configuration.md` is generated from this file.
"""

from __future__ import annotations

from contextvars import ContextVar
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, SecretStr, ValidationError, model_validator
from pydantic.fields import FieldInfo
from pydantic_settings import BaseSettings, PydanticBaseSettingsSource, SettingsConfigDict

from greenloop.errors import GreenloopError
from greenloop.settings_sources import Layer, env_layer, explain, file_layers, merged, workspace_layer


class _Section(BaseModel):
    """A settings section: unknown keys are errors (a typo must not be silently ignored)."""

    model_config = ConfigDict(extra="forbid")


class ModelPrice(_Section):
    """USD per million tokens."""

    prompt: float = Field(default=0.0, ge=0)
    completion: float = Field(default=0.0, ge=0)


class LLMSettings(_Section):
    """The model endpoint and the parameters of every call."""

    base_url: str | None = Field(
        default=None,
        description="OpenAI-compatible endpoint. Unset: OPENAI_BASE_URL, else a model server running here "
        "(local_model.discover), else the embedded local model.",
    )
    api_key: SecretStr | None = Field(default=None, description="API key. Unset: OPENAI_API_KEY. Never logged.")
    model: str = Field(default="local", description="Model name sent to the endpoint.")
    temperature: float = Field(default=0.2, ge=0.0, le=2.0, description="Sampling temperature.")
    seed: int | None = Field(
        default=1234, description="Seed sent with every call and stored with the run (a request asked again: +1 each time)."
    )
    retry_temperature_step: float = Field(
        default=0.3,
        ge=0.0,
        le=1.0,
        description="Added to the temperature each time a request is asked again (a repair), up to 1.0, so "
        "that the retry can differ from the reply it repairs.",
    )
    max_tokens: int = Field(default=2048, gt=0, description="Completion token cap per call.")
    context_window: int | None = Field(
        default=None,
        gt=0,
        description="Tokens the model reads at once. Set: a request that would not fit drops its earlier "
        "repair exchanges, or fails before it is sent. Unset: local_model.n_ctx for the embedded model, "
        "else not checked.",
    )
    timeout: float = Field(
        default=300.0, gt=0,
        description="Seconds before one HTTP request is abandoned; a request that timed out is retried once at most.",
    )
    first_token_timeout: float = Field(
        default=240.0, gt=0,
        description="Seconds a streamed reply may take to send anything (the server reading the prompt) before "
        "the call ends with an error, not retried: a hung server is not waited on timeout x (retries + 1). "
        "240: the embedded model reads about 38 prompt tokens/s on 2 cores, 160 s for a 6k-token prompt. "
        "A longer prompt gets its tokens / llm.slowest_prompt_rate seconds when that is more.",
    )
    slowest_prompt_rate: float = Field(
        default=10.0, gt=0,
        description="Prompt tokens per second the model server reads at its slowest: a prompt's first-token "
        "limit is at least its tokens / this. 10: the embedded 1.5B on 2 cores shared with sandboxes and a "
        "second model server read a 3k-token youtube-dl prompt in over 240 s.",
    )
    max_retries: int = Field(default=4, ge=0, description="Retries on 429, 5xx, timeouts, connection errors.")
    concurrency: int | None = Field(
        default=None, ge=1, le=32,
        description="Requests sent to the endpoint at once: a round's candidates go out together, each its own "
        "request. Unset: the embedded server's slots (local_model.parallel); with any other endpoint a round asks "
        "one candidate at a time, as before (raise it for a hosted model). Never more than the embedded server's "
        "slots. A server that answers "
        "HTTP 429 to requests sent together is asked one at a time for the rest of the run, and the run says so.",
    )
    repair_attempts: int = Field(default=2, ge=0, description="Times invalid structured output is sent back.")
    stop_repeats: bool = Field(
        default=True,
        description="Stream every reply and stop one that repeats itself verbatim, instead of letting "
        "a looping model run to max_tokens.",
    )
    backoff: float = Field(
        default=0.5, gt=0, description="First retry delay in seconds; doubles per retry, with jitter."
    )
    backoff_max: float = Field(
        default=30.0, gt=0, description="Longest wait between retries, also the cap on a server's Retry-After."
    )
    prices: dict[str, ModelPrice] = Field(
        default_factory=dict,
        description="Prices by model name (USD per million tokens), over the table greenloop ships for common "
        "hosted models (greenloop/llm/prices.toml); a model in neither costs 0.",
    )
    cassette: str | None = Field(
        default=None,
        description="A JSONL file of model exchanges (record/replay); relative paths are against the current directory.",
    )
    cassette_mode: Literal["record", "replay", "memo"] = Field(
        default="record",
        description="'record': append every exchange to `llm.cassette`; 'replay': serve them from it, offline; "
        "'memo': serve a request recorded before, ask the model otherwise and record its reply (a bench "
        "whose configs send the same requests asks the model once).",
    )


class LocalModelSettings(_Section):
    """The embedded model: llama.cpp's server with Qwen2.5-Coder-Instruct, on 127.0.0.1."""

    enabled: bool = Field(default=True, description="Start the embedded model when no endpoint is configured.")
    discover: bool = Field(
        default=True,
        description="With no endpoint configured, first look for a model server already running on this "
        "machine (`discover_urls`: Ollama, LM Studio) and use it instead of starting the embedded model.",
    )
    discover_urls: list[str] = Field(
        default=["http://127.0.0.1:11434/v1", "http://127.0.0.1:1234/v1"],
        description="OpenAI-compatible base URLs probed by `discover` (GET /models, 0.5 s, all at once); the "
        "first that lists a model is used. Defaults: Ollama's and LM Studio's ports on 127.0.0.1; nothing "
        "else is probed unless listed here.",
    )
    size: Literal["0.5b", "1.5b"] = Field(
        default="1.5b",
        description="Qwen2.5-Coder-Instruct size. 1.5B: on the README demo it fixed the bug on its first "
        "candidate where the 0.5B fixed nothing in eight (docs/benchmarks/demo.md).",
    )
    n_ctx: int = Field(default=8192, description="Context window of the embedded server (of each slot).")
    parallel: int = Field(
        default=1, ge=1, le=16,
        description="Slots of the embedded server: requests it decodes at once (continuous batching), each with "
        "n_ctx tokens of context (the server gets parallel x n_ctx). 1 (as before) until benchmarks/bench_slots.py "
        "measures more on the target machine (docs/decisions/2026-12-parallel-slots.md). llama-cpp-python's "
        "server has one slot whatever this says.",
    )
    threads: int = Field(
        default=1, ge=1,
        description="CPU threads of the embedded server. 1 was fastest on a busy 2-core machine, for both "
        "servers (docs/decisions/llama-server-flags.md); raise it on a quiet machine with more cores.",
    )
    deterministic: bool = Field(
        default=False,
        description="llama-cpp-python's server: --n_batch 1 --n_ubatch 1, for the same reply to the same request "
        "(llama-server gives that without it).",
    )
    server: Literal["auto", "xllamacpp", "llama-server", "llama-cpp-python"] = Field(
        default="auto",
        description="Which server runs the model. 'auto': a llama-server executable named by `server_path` or on "
        "PATH, else xllamacpp (llama.cpp's server prebuilt, the `[local]` extra), else the llama-server "
        "`greenloop model fetch` built, else llama-cpp-python's (about half the speed) "
        "(docs/decisions/2026-11-prebuilt-model-server.md).",
    )
    server_path: str | None = Field(
        default=None, description="The llama-server executable. Unset: PATH, then the one `greenloop model fetch` built."
    )
    server_args: list[str] = Field(
        default=[], description="Extra llama-server flags, after greenloop's own (a later flag wins). xllamacpp "
        "takes none: with these set, 'auto' runs a llama-server executable.",
    )
    build_timeout: float = Field(
        default=1800.0, gt=0, description="Seconds `greenloop model fetch` may spend building llama-server."
    )
    model_file: str | None = Field(
        default=None,
        description="A GGUF file you already have, served by the embedded server instead of the fetched "
        "Qwen2.5-Coder model.",
    )
    cache_dir: str | None = Field(
        default=None, description="Where fetched models are kept. Unset: the user cache dir (platformdirs)."
    )
    startup_timeout: float = Field(
        default=120.0, gt=0, description="Seconds to wait for the embedded server to answer."
    )


class SandboxSettings(_Section):
    """Where and how tests and commands run."""

    backend: Literal["auto", "docker", "local"] = Field(
        default="auto", description="'auto': Docker when an engine answers, else the local backend."
    )
    template: str = Field(default="auto", description="python | node | rust | auto (detected from the files).")
    test_timeout: float = Field(default=300.0, gt=0, description="Seconds before a test run is killed.")
    test_case_timeout: float = Field(
        default=15.0, ge=0, description="Seconds before one hung test is ended with its stack (python: "
        "pytest-timeout); 0: only the whole run's `test_timeout`. The cap of each test's own limit."
    )
    case_timeout_factor: float = Field(
        default=20.0, ge=0, description="A test's own limit: this many times what it took when it passed (else "
        "the suite's median), at least 1 s, at most `test_case_timeout`; 0: every test gets `test_case_timeout`."
    )
    exec_timeout: float = Field(default=120.0, gt=0, description="Seconds before any other command is killed.")
    memory: str = Field(default="2g", description="Container memory limit.")
    cpus: float = Field(default=2.0, gt=0, description="Container CPU limit.")
    pids: int = Field(default=512, gt=0, description="Container process limit.")
    output_limit: int = Field(default=1_000_000, gt=0, description="Bytes of output kept per command.")
    workers: int = Field(
        default=1, ge=1, le=16,
        description="Sandboxes a round's candidates are tested in at once (each its own container, spread over "
        "`engines`); 1: one warm sandbox, candidates one after another.",
    )
    engines: list[str] = Field(
        default_factory=list,
        description="Docker engines (DOCKER_HOST URLs: unix:///..., tcp://..., ssh://host) the sandboxes run on; "
        "empty: the environment's engine. One that does not answer is skipped with a warning.",
    )
    warm_runs: bool = Field(
        default=True,
        description="Python test runs (pytest, the template's own command) are forked from a worker that has "
        "imported the test session's libraries, instead of starting python and pytest again each time; results "
        "are those of a cold run. Where a project cannot be forked safely (a library starts a thread when "
        "imported), runs are cold and the run says so once. false: every run is cold.",
    )
    install_undeclared: Literal["ask", "never", "always"] = Field(
        default="ask",
        description="A package the project does not declare and no well-known import name maps to (a typo "
        "such as `reqests`, or a name a model made up): 'ask' the editor asks you first (where nobody can be "
        "asked, as in the CLI, it is not installed); 'never'; 'always'. Whatever is installed is built, if "
        "at all, inside the sandbox: no package code runs on this machine.",
    )
    allow_install: list[str] = Field(
        default_factory=list,
        description="Packages installed when asked for even though nobody declared them "
        "(`greenloop fix --allow-install NAME` adds to it for one run).",
    )


class ProjectSettings(_Section):
    """How this project's tests run and where its environment comes from, over its template's.

    The template (`sandbox.template`) still says what the language is: which files are code and tests,
    their grammars, packages. Docs: docs/decisions/2026-11-any-project.md.
    """

    test_command: str | None = Field(
        default=None,
        description="A shell command that runs the tests from the workspace root (`make check`, `tox -e py`, "
        "`npm run test:unit`, `cargo nextest run`). It always runs whole: the loop cannot pick the failing "
        "tests, so every candidate reruns all of it. Its report: `test_report` when set, else TAP or libtest "
        "output when it prints one, else its exit code, with the output's `file:line` frames as the "
        "failure's frames. Unset: the template's test command.",
    )
    test_report: str | None = Field(
        default=None,
        description="A file the test command writes, relative to the workspace: JUnit XML or TAP "
        "(`build/test-results.xml`). Needs `test_command`.",
    )
    setup: list[str] = Field(
        default=[],
        description="Commands baked into the sandbox image (Docker backend), as root with the network, "
        "before the project's files are there (`pip install tox`); the layer is cached by their text.",
    )
    image: str | None = Field(
        default=None,
        description="An image on the Docker engine to start from instead of the template's; never pulled. "
        "greenloop adds a user (uid 1000) and /workspace on top.",
    )
    dockerfile: str = Field(
        default=".greenloop/Dockerfile",
        description="The project's own Dockerfile, used when it exists and `image` is unset. Its folder is the "
        "build context (greenloop's run store, prompts and plan left out); the image is rebuilt only when the "
        "hash of both changes. `ARG BASE` + `FROM ${BASE}` starts from the template's image.",
    )

    @model_validator(mode="after")
    def _report_needs_command(self) -> ProjectSettings:
        if self.test_report and not (self.test_command or "").strip():
            raise ValueError("project.test_report is the report of project.test_command: set that too")
        return self


class RetrievalSettings(_Section):
    """How much code the model sees, chosen by tree-sitter."""

    enabled: bool = Field(default=True, description="Ranked code context; off sends whole files instead.")
    context_tokens: int = Field(default=3000, gt=0, description="Token budget of the code context.")
    top_k: int = Field(default=8, gt=0, description="Locations shown in full.")
    coverage: bool = Field(
        default=True,
        description="Before ranking, run the failing tests and their files' other tests once more under "
        "coverage (python: coverage.py, one context per test; node: V8 coverage, one `node --test` process per "
        "test; none for rust) and fuse the order of what the failing tests ran "
        "and passing tests rarely ran (Ochiai) with the static order. Costs one extra test run per fix run "
        "(a median 7 s on realbugs) for +3 top-3 there and +11 top-3 of 44 on stdlib mutants "
        "(docs/decisions/2026-11-retrieval-coverage.md).",
    )
    coverage_seconds: float = Field(
        default=60.0, gt=0, description="Time for the coverage pass's passing tests (the failing ones always run)."
    )


class PromptSettings(_Section):
    """What a repair request shows the model besides the code and the failing output.

    Each item is on by default and measured by taking it away (benchmarks/configs/ablation/no-*.toml,
    docs/decisions/2026-12-informed-requests.md)."""

    expected_actual: bool = Field(
        default=True,
        description="Under a failing test's output, its failed comparison in words, when pytest showed it: which "
        "call returned what and what the test expects (`==`, `!=`, `in`, `is`, `<`, a bare `assert f(x)`).",
    )
    callee_docs: bool = Field(
        default=True,
        description="The list of what the shown function calls gives each callee's first docstring (or doc "
        "comment) lines beside its signature.",
    )
    executed_lines: bool = Field(
        default=True,
        description="Under a shown function, the lines of it the failing tests ran, from the coverage pass "
        "(`retrieval.coverage`); nothing when no coverage was measured or the code has moved since.",
    )


# The small edits' families (agent/repair/small_edit_candidates.py), each of which `loop.edits_off` can turn off (ablations)
EditFamily = Literal[
    "comparison", "logic operator", "logic operator everywhere",
    "constant", "bound", "arithmetic",
    "operands swapped", "twin called", "none guard", "attribute default",
    "regex", "term dropped", "local name",
]


# loop settings renamed: old name -> new name; the old one is still read (a file, the environment, the editor)
OLD_LOOP_NAMES = {"mutants": "small_edits", "mutation_seconds": "small_edits_seconds"}


class LoopSettings(_Section):
    """The test-fix loop: its budgets and its steps."""

    max_iterations: int = Field(default=5, ge=1, description="Test-fix iterations before giving up.")
    max_tokens: int = Field(default=200_000, gt=0, description="Token budget of one run (all calls).")
    max_cost: float = Field(default=1.0, ge=0, description="Cost budget of one run in USD.")
    max_seconds: float = Field(default=1800.0, gt=0, description="Wall-time budget of one run.")
    diagnosis: bool = Field(default=True, description="Free-text diagnosis call before the plan.")
    history: bool = Field(default=True, description="Earlier attempts go into each prompt.")
    rewrite_lines: int = Field(
        default=0,
        ge=0,
        description="Once an iteration's edits to a file of at most this many lines still miss after the "
        "repairs, the model writes that file whole (small models copy search text badly). 0: never.",
    )
    strategy: Literal["candidates", "plan", "oneshot"] = Field(
        default="candidates",
        description="'candidates': each round samples loop.candidates fixes as plain code (the function the "
        "failure is about, or a whole file) and the tests pick the best; 'plan': one JSON DebugPlan per "
        "iteration (diagnosis, search/replace edits); 'oneshot': the whole file once, greedy (a baseline).",
    )
    candidates: int = Field(default=4, ge=1, le=32, description="Candidate fixes sampled per round.")
    small_edits: int = Field(
        default=60, ge=0, le=1000,
        description="Small edits of the function a failure is about (an operator, a constant, a twin like "
        "min/max, a statement or a name too many) tried by the tests before the model is asked; at most this "
        "many per function. 0: none. (Read under its old name `mutants` too.)",
    )
    small_edits_seconds: float = Field(
        default=150.0, gt=0, description="Longest time the small edits of one function are tested for. "
        "(Read under its old name `mutation_seconds` too.)"
    )
    edits_off: list[EditFamily] = Field(
        default_factory=list,
        description="Small-edit families not tried (for ablations: what a family adds, measured by taking "
        "it away), e.g. [\"regex\"].",
    )
    rungs_off: list[str] = Field(
        default_factory=list,
        description="Rungs of the repair ladder not tried (for ablations), by name: \"settle\", \"install\", "
        "\"missing name\", \"broken file\", \"properties\", \"checks\", \"small edits\", \"function\", "
        "\"hotter\", \"anew\", \"region\", \"blocks\", \"several\", \"next ranked\", \"trim\" (agent/repair/ladder.py); e.g. [\"hotter\"]. A name that is "
        "no rung ends the run with an error.",
    )
    second_look: bool = Field(
        default=True,
        description="When the change that turns the tests green has a shape known to overfit (a suppressed "
        "exception, a guard returning another type, a loop bound moved by more than one step: "
        "agent/repair/risk.py), ask the model once more, shown that change, and keep the better green.",
    )
    full_suite_seconds: float = Field(
        default=60.0, ge=0,
        description="Before a green is offered, the tests that covered the changed code in the coverage pass run "
        "on it, and the whole suite too when its last whole run took under this many seconds (a run of named "
        "tests only: agent/repair/gates.py). 0: never the whole suite.",
    )
    own_round: bool = Field(
        default=True,
        description="A small edit's green does not end the run: the model gets its own round on the same "
        "failure, and the small edit is done only when the model makes the same change or its green is worse "
        "(agent/repair/own_round.py). Off: the small edit's green ends the run (the policy before it).",
    )
    own_round_seconds: float = Field(
        default=300.0, gt=0,
        description="Longest wait for the model's own round after a small edit's green; past it the small edit "
        "is offered as plausible, and the run says the model was too slow.",
    )
    trim_tries: int = Field(
        default=4, ge=0,
        description="A green whose state holds earlier rounds' changes is tried without each of them, at most this "
        "many tries; one its tests and gates pass without is left out (agent/repair/trim.py). 0: no trimming.",
    )
    candidate_temperature: float = Field(
        default=0.8, ge=0.0, le=2.0,
        description="Sampling temperature of every candidate after the first (the first is greedy).",
    )
    edit_tests: bool = Field(
        default=False,
        description="Let fix change test files. Off: tests are the spec; an action on one is refused.",
    )
    test_paths: list[str] = Field(
        default_factory=list,
        description="Extra globs of test files (besides the usual names and the template's test_globs).",
    )

    @model_validator(mode="before")
    @classmethod
    def _old_names(cls, data: Any) -> Any:
        """The small edits' settings under their old names (`mutants`, `mutation_seconds`): read as the new ones."""
        if not isinstance(data, dict):
            return data
        data = dict(data)
        for old, new in OLD_LOOP_NAMES.items():
            if old in data:
                value = data.pop(old)
                if new in data and str(data[new]) != str(value):  # the same value twice: a dump of these settings
                    raise ValueError(f"loop.{old} is the old name of loop.{new}: set only loop.{new}")
                data.setdefault(new, value)
        return data


class GenerateSettings(_Section):
    """Generating a project from a prompt."""

    parallel_files: int = Field(default=2, ge=1, description="Files generated at once.")
    small_steps: bool = Field(default=False, description="Each component gets its own tests and loop.")
    clarify: bool = Field(default=False, description="Ask clarifying questions before planning.")
    max_prompt_chars: int = Field(default=20_000, gt=0, description="Longest prompt accepted (characters).")
    max_files: int = Field(default=40, ge=2, description="Most files a plan may list.")
    file_attempts: int = Field(
        default=3, ge=1, description="Requests per file before giving up when the reply holds no code."
    )


class RunsSettings(_Section):
    """The run store: what every run did, cost and decided."""

    enabled: bool = Field(default=True, description="Record every run in the run store.")
    store: str | None = Field(default=None, description="SQLite file. Unset: .greenloop/runs.sqlite3.")
    label: str | None = Field(
        default=None, description="Step config name stored with each run (bench: the config file's stem)."
    )


class Settings(BaseSettings):
    """All of greenloop's parameters."""

    model_config = SettingsConfigDict(env_prefix="GREENLOOP_", env_nested_delimiter="__", extra="forbid")

    llm: LLMSettings = Field(default_factory=LLMSettings)
    local_model: LocalModelSettings = Field(default_factory=LocalModelSettings)
    sandbox: SandboxSettings = Field(default_factory=SandboxSettings)
    project: ProjectSettings = Field(default_factory=ProjectSettings)
    retrieval: RetrievalSettings = Field(default_factory=RetrievalSettings)
    prompt: PromptSettings = Field(default_factory=PromptSettings)
    loop: LoopSettings = Field(default_factory=LoopSettings)
    generate: GenerateSettings = Field(default_factory=GenerateSettings)
    runs: RunsSettings = Field(default_factory=RunsSettings)

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        return tuple(_NewNames(settings_cls, source) for source in (init_settings, env_settings,
                                                                       _FileSource(settings_cls)))


_file_values: ContextVar[dict[str, Any] | None] = ContextVar("greenloop_file_settings", default=None)


class _NewNames(PydanticBaseSettingsSource):
    """A source whose `loop` section's old names (OLD_LOOP_NAMES) are read as the new ones before the sources are
    merged, so that their order decides between an old name in one and the new name in another, as for any
    setting; both names in one source stay both (LoopSettings refuses them when they differ)."""

    def __init__(self, settings_cls: type[BaseSettings], inner: PydanticBaseSettingsSource) -> None:
        super().__init__(settings_cls)
        self.inner = inner

    def get_field_value(self, field: FieldInfo, field_name: str) -> tuple[Any, str, bool]:
        return self.inner.get_field_value(field, field_name)

    def __call__(self) -> dict[str, Any]:
        data = self.inner()
        loop = data.get("loop")
        if not isinstance(loop, dict) or not any(old in loop for old in OLD_LOOP_NAMES):
            return data
        loop = dict(loop)
        for old, new in OLD_LOOP_NAMES.items():
            if old in loop and new not in loop:
                loop[new] = loop.pop(old)
        return {**data, "loop": loop}


class _FileSource(PydanticBaseSettingsSource):
    """Values from the config files (set by `load_settings`)."""

    def get_field_value(self, field: FieldInfo, field_name: str) -> tuple[Any, str, bool]:
        return (_file_values.get() or {}).get(field_name), field_name, False

    def __call__(self) -> dict[str, Any]:
        return dict(_file_values.get() or {})


def read_config_file(workspace: Path | None) -> dict[str, Any]:
    """`greenloop.toml`, else `[tool.greenloop]` of `pyproject.toml`, else {}."""
    layer = workspace_layer(workspace)
    return layer.values if layer is not None else {}


def load_settings(
    workspace: Path | None = None, overrides: dict[str, Any] | None = None, *, config_file: Path | None = None
) -> Settings:
    """Settings for a workspace: user file, workspace file (or `config_file`), env, then `overrides`.

    A bad value or an unknown key is a GreenloopError naming the key and where it was set
    (file and line, variable, or flag); see `greenloop.settings_sources`.
    """
    files = file_layers(workspace, config_file)
    token = _file_values.set(merged(files))
    try:
        return Settings(**(overrides or {}))
    except ValidationError as exc:
        layers = [*files, env_layer(Settings), Layer("flags or editor settings", overrides or {})]
        raise GreenloopError(explain(exc, layers)) from None
    except ValueError as exc:  # pydantic-settings: a variable that is not valid JSON for a dict/list
        raise GreenloopError(f"Invalid greenloop settings: {exc}") from exc
    finally:
        _file_values.reset(token)
