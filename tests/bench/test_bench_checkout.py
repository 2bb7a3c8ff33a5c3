"""Every bench cell records the commit it ran at and whether the code was changed; older state still reads."""

from __future__ import annotations

import asyncio
import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from greenloop.bench import BenchOptions, load_configs, run_bench, write_reports
from greenloop.bench.checkout import read_code_version
from greenloop.bench.runner import state_dir
from greenloop.bench.suites import repo_root
from greenloop.settings import Settings

PLAIN = repo_root() / "benchmarks" / "configs" / "plain.toml"
ROW = {
    "task_id": "Python/0",
    "entry_point": "add",
    "declaration": "def add(a, b):\n",
    "buggy_solution": "    return a - b\n",
    "canonical_solution": "    return a + b\n",
    "test": "def check(add):\n    assert add(2, 3) == 5\n\ncheck(add)\n",
}


def _git(root: Path, *args: str) -> str:
    done = subprocess.run(["git", "-C", str(root), "-c", "user.name=t", "-c", "user.email=t@example.org", *args],
                          capture_output=True, text=True, check=True)
    return done.stdout.strip()


def test_a_checkout_is_read_as_commit_and_whether_its_code_changed(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    (repo / "server" / "greenloop").mkdir(parents=True)
    (repo / "server" / "greenloop" / "a.py").write_text("x = 1\n")
    (repo / "sandbox").mkdir()
    assert read_code_version(repo).label() == "unknown (not a git checkout)"
    _git(repo, "init", "-q")
    _git(repo, "add", ".")
    _git(repo, "commit", "-qm", "first")
    head = _git(repo, "rev-parse", "HEAD")
    assert (read_code_version(repo).commit, read_code_version(repo).dirty) == (head, False)
    (repo / "docs").mkdir()
    (repo / "docs" / "report.md").write_text("a bench's output is not the code\n")
    assert read_code_version(repo).dirty is False
    (repo / "sandbox" / "new.py").write_text("y = 2\n")  # new code, not yet committed
    assert read_code_version(repo).dirty is True
    (repo / "sandbox" / "new.py").unlink()
    (repo / "server" / "greenloop" / "a.py").write_text("x = 2\n")
    assert read_code_version(repo).label() == f"{head[:12]} (dirty)"
    # a folder that is not greenloop's source, inside some repository, names no commit
    (repo / "lib").mkdir()
    assert read_code_version(repo / "lib").label() == "unknown (not a git checkout)"


@pytest.fixture
def base(scripted_llm: Any) -> Settings:
    scripted_llm.script("no idea", step="diagnosis")
    scripted_llm.script(json.dumps({"diagnosis": "no idea", "actions": []}), step="debug_plan")
    return Settings(
        llm={"base_url": scripted_llm.base_url, "api_key": "test-key", "model": "scripted", "max_retries": 0},
        local_model={"enabled": False},
        sandbox={"backend": "local"},
        loop={"max_iterations": 1, "strategy": "plan"},
    )


async def test_each_cell_records_its_commit_and_an_older_cell_reads_as_not_recorded(
    tmp_path: Path, base: Settings
) -> None:
    suite = tmp_path / "suite.jsonl"
    suite.write_text(json.dumps(ROW) + "\n")
    out = tmp_path / "bench"
    configs = load_configs([PLAIN])
    state = state_dir(out)
    state.mkdir(parents=True)
    older = {"key": f"plain@{configs[0].digest}|scripted|Python/0|0", "config": "plain", "task": "Python/0",
             "repeat": 0, "seed": 1, "model": "scripted", "outcome": "failed", "iterations": 1}
    (state / "results.jsonl").write_text(json.dumps(older) + "\n")  # written before cells recorded commits

    options = BenchOptions(suite="humanevalfix", suite_file=suite, out_dir=out, configs=configs, repeat=2)
    run = await run_bench(options, base)
    assert (run.resumed, run.ran_now) == (1, 1)
    rows = [json.loads(line) for line in (state / "results.jsonl").read_text().splitlines()]
    head = await asyncio.to_thread(_git, repo_root(), "rev-parse", "HEAD")
    assert rows[1]["commit"] == head and isinstance(rows[1]["dirty"], bool)
    assert [r.commit for r in run.results] == ["", head]

    files = write_reports(run)
    shown = f"{head[:12]} ({'dirty' if rows[1]['dirty'] else 'clean'})"
    assert json.loads(files.json.read_text())["meta"]["code"] == {"not recorded": 1, shown: 1}
    line = "; ".join(f"{label}: 1 cell(s)" for label in sorted(["not recorded", shown]))
    assert f"\n- code: {line}\n" in files.markdown.read_text()
