"""Runs a suite under each step config N times, J at a time; each result is kept as soon as it ends."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import shlex
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from greenloop import __version__
from greenloop.bench import handoff
from greenloop.bench.cell_outcome import consume
from greenloop.bench.checkout import code_version, code_versions
from greenloop.bench.configs import StepConfig, apply_config
from greenloop.bench.oracle import ORACLE
from greenloop.bench.oracle_server import case_settings, oracle_model, refuse_cluster
from greenloop.bench.state import NOT_RUN, BenchState, CellResult, cell_key
from greenloop.bench.suites import Suite, Task, load_suite, repo_root
from greenloop.errors import GreenloopError
from greenloop.settings import Settings

log = logging.getLogger(__name__)

STATE_DIR = ".bench"  # results.jsonl and runs.sqlite3 live here, under the output folder
CELL_GRACE = 120.0  # seconds past the loop's own wall-time budget before a cell is abandoned


@dataclass
class BenchOptions:
    suite: str
    out_dir: Path
    configs: list[StepConfig]
    repeat: int = 1
    jobs: int = 1
    suite_file: Path | None = None
    limit: int | None = None
    sample: int | None = None  # a fixed, seeded subset of the suite
    sample_seed: int = 0
    stratify: str | None = None  # the task field whose values share the sample (realbugs: project)
    retry_errors: bool = False
    report_only: bool = False  # run nothing; report what the state folder holds
    cluster: str | None = None  # a Ray cluster's address ("auto" or HOST:PORT): cells run as Ray tasks
    command: str = field(default_factory=lambda: shlex.join(["greenloop", *sys.argv[1:]]))


@dataclass(frozen=True)
class Cell:
    key: str
    config: StepConfig
    task: Task
    repeat: int
    settings: Settings


@dataclass
class BenchRun:
    """What a bench run did: the suite, every result (old and new), and how many ran now."""

    suite: Suite
    options: BenchOptions
    results: list[CellResult]
    ran_now: int
    resumed: int
    base: Settings
    unreadable_state_lines: int = 0


Progress = Callable[[CellResult, int, int], None]
Status = Callable[[str], None]  # one line on what the cluster is doing (cells done, running, per node)


def state_dir(out_dir: Path) -> Path:
    return out_dir / STATE_DIR


def plan_cells(suite: Suite, options: BenchOptions, base: Settings) -> list[Cell]:
    """Every (config, task, repeat); seeds differ per repeat so repeats are not copies of each other.

    Configs are interleaved (repeat -> task -> config), so a bench stopped part-way still compares
    every config on the same tasks, and a machine that slows down over time slows all configs alike.
    """
    store = state_dir(options.out_dir) / "runs.sqlite3"
    cells: list[Cell] = []
    for repeat in range(options.repeat):
        per_config: list[tuple[StepConfig, Settings]] = []
        for config in options.configs:
            configured = apply_config(
                base, config, {"runs": {"enabled": True, "store": str(store), "label": config.name}}
            )
            seed = None if configured.llm.seed is None else configured.llm.seed + repeat
            per_config.append(
                (
                    config,
                    configured.model_copy(update={"llm": configured.llm.model_copy(update={"seed": seed})}),
                )
            )
        for position, task in enumerate(suite.tasks):
            for config, settings in per_config:
                if config.tasks is not None and position >= config.tasks:
                    continue
                key = cell_key(config.name, config.digest, settings.llm.model, task.id, repeat)
                cells.append(Cell(key=key, config=config, task=task, repeat=repeat,
                                  settings=case_settings(settings, task.id)))
    return cells


async def run_bench(options: BenchOptions, base: Settings, *, progress: Progress | None = None,
                    status: Status | None = None) -> BenchRun:
    """Run every cell not already finished in `options.out_dir`; cancelling stops all running cells."""
    if options.repeat < 1 or options.jobs < 0 or (options.jobs == 0 and not options.cluster):
        raise GreenloopError("--repeat and --jobs must be at least 1")
    suite = load_suite(options.suite, options.suite_file, limit=options.limit, sample=options.sample,
                       sample_seed=options.sample_seed, stratify=options.stratify)
    state = BenchState(state_dir(options.out_dir))
    store = state_dir(options.out_dir) / "runs.sqlite3"
    handoff.recover(state, store)  # cells a killed driver had received but not yet written down
    running = not options.report_only
    refuse_cluster(base, options.cluster if running else None)
    if running and options.cluster and not (base.llm.base_url or os.environ.get("OPENAI_BASE_URL")):
        raise GreenloopError("--cluster needs a model endpoint every node can reach: set llm.base_url "
                             "(or OPENAI_BASE_URL); the embedded model serves only this machine.")
    model = (oracle_model(base, suite.tasks, needed=running) if base.llm.model == ORACLE
             else shared_model(base, needed=running))
    async with model as base_settings:
        cells = plan_cells(suite, options, base_settings)
        todo = [c for c in cells if not state.done(c.key, retry_errors=options.retry_errors)]
        resumed = len(cells) - len(todo)  # finished before this run started
        if options.report_only:
            todo = []
        with contextlib.ExitStack() as stack:
            runner = local_runner(state)
            jobs = options.jobs
            if options.cluster and todo:
                from greenloop.bench.cluster import ClusterCells, connected

                ray = stack.enter_context(connected(options.cluster))
                cluster = ClusterCells(ray, run_cell, None if status is None else lambda s: status(s.line()))
                runner = cluster_runner(cluster, state, store)
                jobs = jobs or max(1, int(ray.cluster_resources().get("CPU", 1)))
                stack.callback(cluster.reap_everywhere, base_settings)
            await _run_all(todo, runner, jobs, progress)
    results = [state.results[c.key] for c in cells if c.key in state.results]
    ran = sum(1 for c in todo if c.key in state.results)
    return BenchRun(suite, options, results, ran, resumed, base_settings, state.unreadable)


CellRunner = Callable[[Cell], Awaitable[CellResult | None]]


def local_runner(state: BenchState) -> CellRunner:
    """Cells in this process; each result kept as soon as it ends."""
    async def one(cell: Cell) -> CellResult:
        result = await run_cell(cell)
        state.add(result)
        return result

    return one


def cluster_runner(cluster: Any, state: BenchState, store: Path) -> CellRunner:
    """Cells as Ray tasks; what comes back is kept exactly once (`handoff.keep`)."""
    async def one(cell: Cell) -> CellResult | None:
        output = await cluster.run(cell)
        if output is None:
            return None
        await asyncio.to_thread(handoff.keep, state, store, output.result, output.bundle)
        return output.result

    return one


async def _run_all(todo: list[Cell], runner: CellRunner, jobs: int, progress: Progress | None) -> None:
    gate = asyncio.Semaphore(jobs)
    finished = 0

    async def one(cell: Cell) -> None:
        nonlocal finished
        async with gate:
            result = await runner(cell)
        if result is None:
            return
        finished += 1
        if progress is not None:
            progress(result, finished, len(todo))

    async with asyncio.TaskGroup() as group:
        for cell in todo:
            group.create_task(one(cell))


async def run_cell(cell: Cell) -> CellResult:
    """One task under one config in a fresh temporary workspace; any failure becomes an "error" result."""
    start = time.monotonic()
    settings = cell.settings
    code = await asyncio.to_thread(code_version)  # git, once per process
    result = CellResult(
        key=cell.key,
        config=cell.config.name,
        task=cell.task.id,
        repeat=cell.repeat,
        seed=settings.llm.seed,
        model=settings.llm.model,
        outcome="error",
        commit=code.commit,
        dirty=code.dirty,
    )
    seen: dict[str, Any] = {}  # the last budget event, then the Done event: usage even when abandoned
    try:
        async with asyncio.timeout(cell_limit(settings)):
            with tempfile.TemporaryDirectory(prefix="greenloop-bench-") as tmp:
                done = await _drive(cell.task, Path(tmp), settings, seen, bare=cell.config.bare)
        result.outcome = str(done.get("outcome", "error"))
        result.extra = dict(done.get("extra") or {})
        if cell.task.kind == "generate" and cell.task.extra.get("hidden_tests"):
            from greenloop.bench.acceptance import acceptance_of, files_of

            result.extra["acceptance"] = await acceptance_of(files_of(done), cell.task.extra["hidden_tests"], settings)
        if result.outcome == "green" and cell.task.kind == "fix" and "fixed" in cell.task.extra:
            from greenloop.bench.correctness import humanevalfix_verdict

            verdict = await humanevalfix_verdict(cell.task.files, cell.task.extra, done["changes"], settings)
            result.extra["verdict"] = verdict.to_json()
        result.error = str(done.get("evidence", "")) if result.outcome in ("error", *NOT_RUN) else ""
    except TimeoutError:
        result.error = f"abandoned after {cell_limit(settings):.0f}s"
    except GreenloopError as exc:
        result.error = str(exc)
    except Exception as exc:  # one broken task must not stop the bench; it is reported as an error
        log.exception("bench task %s failed", cell.task.id)
        result.error = f"{type(exc).__name__}: {exc}"
    _take_usage(result, seen)  # an abandoned run keeps what it used, not zero
    # the environment a task needs, built once and cached (realbugs' installs), is no part of its wall time
    judged = float((result.extra.get("verdict") or result.extra.get("acceptance") or {}).get("seconds", 0.0))
    result.seconds = time.monotonic() - start - float(result.extra.get("setup_seconds", 0.0)) - judged
    served = float(seen.get("served_seconds", 0.0))  # a memo bench charges a served reply the model's seconds
    if served > 0:
        result.extra["served_seconds"] = served
        result.seconds += served
    return result


def cell_limit(settings: Settings) -> float:
    """Seconds after which a cell is abandoned: the loop's own wall budget plus a grace period."""
    return settings.loop.max_seconds + CELL_GRACE


def _take_usage(result: CellResult, fields: dict[str, Any]) -> None:
    """Copy run id, iterations, tokens and cost from a Done or budget event's fields."""
    result.run_id = str(fields.get("run_id", ""))
    result.iterations = int(fields.get("iterations", fields.get("iteration", 0)))
    result.prompt_tokens = int(fields.get("prompt_tokens", 0))
    result.completion_tokens = int(fields.get("completion_tokens", 0))
    result.cost = float(fields.get("cost", 0.0))


async def _drive(task: Task, tmp: Path, settings: Settings, seen: dict[str, Any], *, bare: bool = False
                 ) -> dict[str, Any]:
    """Run the agent on the task and return the Done event as a dict; `seen` gets the usage so far.
    `bare`: a generate task asks the model once for its module (bench/acceptance.py), the baseline."""
    if task.kind == "generate" and bare:
        from greenloop.bench.acceptance import bare_generate

        return await bare_generate(task.prompt, str(task.extra.get("module") or "main.py"), settings, seen)
    if task.kind == "realbugs":
        from greenloop.bench.realbugs_run import drive_case

        return await drive_case(task, tmp, settings, seen)
    if task.kind == "generate":
        from greenloop.agent.generate import GenerateRequest, generate

        out = tmp / "out"
        events = generate(GenerateRequest(prompt=task.prompt, out_dir=out, template=task.template), settings)
    else:
        from greenloop.agent import FixRequest, fix

        workspace = tmp / "ws"
        for rel, text in task.files.items():
            path = workspace / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
        events = fix(FixRequest(workspace=workspace), settings)
    return await consume(events, seen)


@contextlib.asynccontextmanager
async def shared_model(settings: Settings, *, needed: bool = True) -> AsyncIterator[Settings]:
    """Start the embedded model once for the whole bench (not once per run) when no endpoint is set."""
    if (
        not needed
        or settings.llm.base_url
        or os.environ.get("OPENAI_BASE_URL")
        or not settings.local_model.enabled
    ):
        yield settings
        return
    from greenloop.llm import open_llm

    async with open_llm(settings) as client:
        url = getattr(client, "base_url", None)
        if not isinstance(url, str) or not url:
            yield settings
            return
        yield settings.model_copy(update={"llm": settings.llm.model_copy(update={"base_url": url})})


def shown_path(path: Path) -> str:
    """`path` relative to the checkout (or its parent, for a file beside it): the same in every clone or worktree."""
    root = repo_root()
    for where in (Path(os.path.abspath(path)), path.resolve()):  # a symlinked folder keeps its own name
        for base, prefix in ((root, ""), (root.parent, "../")):
            if where.is_relative_to(base):
                return prefix + where.relative_to(base).as_posix()
    return str(path)


def report_meta(run: BenchRun, finished: str) -> dict[str, Any]:
    """The report header: what ran, with which model, sandbox and seeds."""
    configs = [apply_config(run.base, c) for c in run.options.configs]
    notes = []
    missing = len(run.options.configs) * run.options.repeat * len(run.suite.tasks) - len(run.results)
    if missing:
        notes.append(f"incomplete: {missing} cell(s) have not run yet; rerun the command to finish")
    if run.resumed:
        notes.append(f"resumed: {run.resumed} cell(s) were finished by an earlier, interrupted run")
    if run.unreadable_state_lines:
        notes.append(f"{run.unreadable_state_lines} unreadable line(s) in the state file were ignored")
    return {
        "suite": run.suite.name,
        "suite_file": shown_path(run.suite.source),
        "tasks": len(run.suite.tasks),
        "repeat": run.options.repeat,
        "jobs": run.options.jobs,
        "configs": {c.name: c.overrides for c in run.options.configs},
        "model": run.base.llm.model,
        "base_url": run.base.llm.base_url or "embedded local model",
        "sandbox": run.base.sandbox.backend,
        "seed": run.base.llm.seed,
        "max_iterations": max(s.loop.max_iterations for s in configs),
        "finished": finished,
        "version": __version__,
        "code": code_versions(run.results),  # cells per commit they ran at
        "command": run.options.command,
        "ran_now": run.ran_now,
        "skipped_rows": run.suite.skipped,
        "notes": notes,
    }
