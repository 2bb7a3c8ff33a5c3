"""A small bench end to end: 2 HumanEvalFix tasks x 2 configs x 2 repeats with an oracle model.

The oracle fixes one task and gives up on the other, so every config must land at 50%.
The first bench is interrupted; the rerun must only do the cells that had not finished.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
from pathlib import Path
from typing import Any

import pytest
from tests.support.scripted_llm import slow

from greenloop.bench import BenchOptions, CellResult, load_configs, run_bench, runner, write_reports
from greenloop.bench.runner import state_dir
from greenloop.bench.suites import load_suite, repo_root
from greenloop.cli import main
from greenloop.run_records import RunStore
from greenloop.settings import Settings

CONFIGS = [repo_root() / "benchmarks" / "configs" / f"{name}.toml" for name in ("plain", "no-diagnosis")]


def _oracle(fixable: dict[str, Any]) -> Any:
    """The canonical fix when the buggy function is in the prompt; an empty plan for anything else."""
    buggy, canonical = fixable["buggy_solution"], fixable["canonical_solution"]
    entry = fixable["entry_point"]

    def answer(request: dict[str, Any]) -> str:
        prompt = "\n".join(str(m.get("content") or "") for m in request["messages"])
        if all(line.strip() in prompt for line in buggy.splitlines() if line.strip()):
            edit = {"kind": "edit", "path": f"{entry}.py", "search": buggy, "replace": canonical}
            return json.dumps({"diagnosis": "the distance must be absolute", "actions": [edit]})
        return json.dumps({"diagnosis": "no idea", "actions": []})

    return answer


@pytest.fixture
def base(scripted_llm: Any) -> Settings:
    suite = load_suite("humanevalfix", limit=2)
    scripted_llm.script("the comparison is wrong", step="diagnosis")
    scripted_llm.script(_oracle(suite.tasks[0].extra), step="debug_plan")
    return Settings(
        llm={"base_url": scripted_llm.base_url, "api_key": "test-key", "model": "scripted", "max_retries": 0},
        local_model={"enabled": False},
        sandbox={"backend": "local"},
        loop={"max_iterations": 1, "strategy": "plan"},  # the oracle answers the plan loop's JSON
    )


async def _interrupted(options: BenchOptions, base: Settings, after: int) -> None:
    task: asyncio.Task[Any] | None = None

    def progress(result: CellResult, finished: int, total: int) -> None:
        if finished >= after and task is not None:
            task.cancel()

    task = asyncio.create_task(run_bench(options, base, progress=progress))
    with pytest.raises(asyncio.CancelledError):
        await task


async def test_bench_reports_and_resumes(tmp_path: Path, base: Settings, scripted_llm: Any) -> None:
    out = tmp_path / "bench"
    options = BenchOptions(
        suite="humanevalfix", out_dir=out, configs=load_configs(CONFIGS), repeat=2, jobs=2, limit=2
    )

    await _interrupted(options, base, after=3)
    state_file = state_dir(out) / "results.jsonl"
    finished_before = {json.loads(line)["key"] for line in state_file.read_text().splitlines()}
    assert 3 <= len(finished_before) < 8

    # A report of a partial bench counts only the cells that finished as resumed.
    partial = await run_bench(dataclasses.replace(options, report_only=True), base)
    assert (partial.resumed, partial.ran_now, len(partial.results)) == (
        len(finished_before),
        0,
        len(finished_before),
    )

    seen: list[str] = []
    run = await run_bench(options, base, progress=lambda r, n, t: seen.append(r.key))
    assert run.resumed == len(finished_before) and run.ran_now == 8 - len(finished_before)
    assert not finished_before & set(seen)  # nothing that had finished ran again
    assert len(run.results) == 8

    files = write_reports(run)
    by_config = {s.config: s for s in files.summaries}
    assert list(by_config) == ["plain", "no-diagnosis"]
    for s in by_config.values():
        assert (s.runs, s.passed, s.pass_rate) == (4, 2, 0.5)
        assert s.pass_by_iteration == [0.0, 0.5]
        assert s.ci_low < 0.5 < s.ci_high and s.mean_tokens > 0
    md = files.markdown.read_text()
    assert "| plain | 4 | 50.0% |" in md and "| no-diagnosis | 4 | 50.0% |" in md and "resumed" in md
    assert files.plot is not None
    png = files.plot.read_bytes()
    assert png.startswith(b"\x89PNG\r\n\x1a\n") and len(png) > 5000
    report = json.loads(files.json.read_text())
    assert len(report["results"]) == 8 and report["meta"]["configs"]["no-diagnosis"] == {
        "loop": {"diagnosis": False}
    }
    # the suite is named as in any clone or worktree, not by this machine's absolute path
    assert report["meta"]["suite_file"] == "benchmarks/data/humanevalfix/humanevalfix-python.jsonl"

    # Every run is in the bench's run store, labelled with its config; the config reached the agent.
    with RunStore.open(state_dir(out) / "runs.sqlite3") as store:
        rows = {r.group["config"]: r for r in store.stats(by=["config"])}
        assert rows["plain"].green == rows["no-diagnosis"].green == 2
        runs = [store.get_run(r.id) for r in store.list_runs(limit=100)]
    steps = {(d.config_name, c["step"]) for d in runs for c in d.calls}
    assert ("plain", "diagnosis") in steps and ("no-diagnosis", "diagnosis") not in steps
    assert {d.seed for d in runs} == {base.llm.seed, base.llm.seed + 1}  # repeats use different seeds


def test_cli_resumes_a_finished_bench(
    tmp_path: Path, scripted_llm: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "bench"
    state = state_dir(out)
    state.mkdir(parents=True)
    configs = load_configs(CONFIGS)
    lines = []
    for config in configs:
        for repeat in range(2):
            key = f"{config.name}@{config.digest}|scripted|Python/0|{repeat}"
            lines.append(
                json.dumps(
                    {
                        "key": key,
                        "config": config.name,
                        "task": "Python/0",
                        "repeat": repeat,
                        "seed": 1,
                        "model": "scripted",
                        "outcome": "green",
                        "iterations": 1,
                    }
                )
            )
    (state / "results.jsonl").write_text("\n".join(lines) + "\n" + '{"key": "cut off mid-wri')
    args = [
        "bench",
        "--suite",
        "humanevalfix",
        "--limit",
        "1",
        "--repeat",
        "2",
        "--out",
        str(out),
        "--model",
        "scripted",
        "--base-url",
        scripted_llm.base_url,
        "--sandbox",
        "local",
        "--json",
    ]
    for path in CONFIGS:
        args += ["--config", str(path)]
    assert main(args) == 0
    summary = json.loads(capsys.readouterr().out)
    assert [(s["config"], s["runs"], s["pass_rate"]) for s in summary] == [
        ("plain", 2, 1.0),
        ("no-diagnosis", 2, 1.0),
    ]
    assert scripted_llm.requests == []  # all cells were done: the model was never asked
    md = (out / "report.md").read_text()
    assert "1 unreadable line(s)" in md and (out / "pass_by_iteration.png").is_file()

    # A bigger suite slice, reported without running: the missing cells are named, nothing runs.
    limit = args.index("--limit") + 1
    assert main([*args[:limit], "2", *args[limit + 1 :], "--report-only"]) == 0
    assert "incomplete: 4 cell(s)" in (out / "report.md").read_text()
    assert scripted_llm.requests == []


def test_cells_interleave_configs_so_a_partial_bench_is_balanced(base: Settings, tmp_path: Path) -> None:
    from greenloop.bench.runner import plan_cells

    suite = load_suite("humanevalfix", limit=2)
    options = BenchOptions(suite="humanevalfix", out_dir=tmp_path, configs=load_configs(CONFIGS), repeat=2)
    cells = plan_cells(suite, options, base)
    order = [(c.repeat, c.task.id, c.config.name) for c in cells]
    assert order[:4] == [
        (0, suite.tasks[0].id, "plain"),
        (0, suite.tasks[0].id, "no-diagnosis"),
        (0, suite.tasks[1].id, "plain"),
        (0, suite.tasks[1].id, "no-diagnosis"),
    ]
    assert len(set(order)) == len(order) == 8
    assert {c.settings.llm.seed for c in cells if c.repeat == 1} == {base.llm.seed + 1}


async def test_an_abandoned_cell_keeps_what_it_used(
    tmp_path: Path, scripted_llm: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A cell cut off at its time limit reports the tokens of the iterations it finished, not zero."""
    task = load_suite("humanevalfix", limit=1).tasks[0]
    first = next(line for line in task.extra["buggy_solution"].splitlines() if line.strip())
    edit = {
        "kind": "edit",
        "path": f"{task.extra['entry_point']}.py",
        "search": first,
        "replace": first + "  # seen",
    }
    scripted_llm.script("the comparison is wrong", slow(600, "too late"), step="diagnosis", repeat=False)
    scripted_llm.script(json.dumps({"diagnosis": "d", "actions": [edit]}), step="debug_plan")
    base = Settings(
        llm={"base_url": scripted_llm.base_url, "api_key": "k", "model": "scripted", "max_retries": 0},
        local_model={"enabled": False},
        sandbox={"backend": "local"},
        loop={"max_iterations": 3, "strategy": "plan"},
    )
    monkeypatch.setattr(runner, "cell_limit", lambda settings: 30.0)
    options = BenchOptions(suite="humanevalfix", out_dir=tmp_path, configs=load_configs(CONFIGS[:1]), limit=1)
    run = await run_bench(options, base)
    (result,) = run.results
    assert result.outcome == "error" and result.error == "abandoned after 30s"
    assert result.iterations == 1 and result.prompt_tokens > 0 and result.completion_tokens > 0
    assert result.run_id and 30.0 <= result.seconds < 90


def test_progress_lines_show_errors_verbatim() -> None:
    from rich.console import Console

    from greenloop.cli.bench import progress_line

    result = CellResult(
        key="k",
        config="plain",
        task="Python/[3]",
        repeat=0,
        seed=1,
        model="m",
        outcome="error",
        error="SEARCH not found: numbers[i] [/x]",
    )
    console = Console(width=300, force_terminal=False, color_system=None, record=True)
    console.print(progress_line(result, 2, 16))
    assert console.export_text().strip() == (
        "[2/16] plain Python/[3] #0: error (0 it, 0 tok, 0.0s) SEARCH not found: numbers[i] [/x]"
    )
