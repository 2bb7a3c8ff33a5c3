"""benchmarks/bench_versions.py: one bench at two commits, task by task, each commit in its own worktree.

Two HumanEvalFix tasks on the local sandbox, the model a scripted server that gives up, so each cell is
the small edits' own. Both labels must hold both tasks' cells, run from worktrees of the named commit,
and the final reports cover the whole suite.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from greenloop.bench.suites import load_suite

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "benchmarks"))

import bench_versions  # noqa: E402


def _cells(folder: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (folder / ".bench" / "results.jsonl").read_text().splitlines()]


def test_each_commit_runs_every_task_from_its_own_worktree(
    tmp_path: Path, scripted_llm: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GREENLOOP_LLM__API_KEY", "test-key")  # the benches are subprocesses: settings by env
    monkeypatch.setenv("GREENLOOP_LLM__MAX_RETRIES", "0")
    scripted_llm.script('{"diagnosis": "no idea", "actions": []}')
    suite = load_suite("humanevalfix", limit=2)
    suite_file = tmp_path / "two.jsonl"
    suite_file.write_text("".join(suite.source.read_text().splitlines(keepends=True)[:2]))
    out = tmp_path / "versions"
    head = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short=12", "HEAD"], check=True,
                          capture_output=True, text=True).stdout.strip()
    try:
        code = bench_versions.main([
            "--before", "HEAD", "--after", "HEAD", "--suite-file", str(suite_file), "--out", str(out), "--",
            "--suite", "humanevalfix", "--sandbox", "local", "--max-iterations", "1",
            "--base-url", scripted_llm.base_url, "--model", "scripted"
        ])
        assert code == 0
        assert sorted(p.name for p in (out / "trees").iterdir()) == [head]
        tree_head = subprocess.run(["git", "-C", str(out / "trees" / head), "rev-parse", "HEAD"], check=True,
                                   capture_output=True, text=True).stdout
        assert tree_head.startswith(head)
        assert sorted(p.name for p in (out / "tasks").glob("*.jsonl")) == ["000.jsonl", "001.jsonl"]
        for label in ("before", "after"):
            cells = _cells(out / label)
            assert sorted(c["task"] for c in cells) == sorted(t.id for t in suite.tasks)
            report = json.loads((out / label / "report.json").read_text())
            assert sum(c["runs"] for c in report["configs"]) == 2
        # a rerun resumes: no cell runs twice
        assert bench_versions.main([
            "--before", "HEAD", "--suite-file", str(suite_file), "--out", str(out), "--",
            "--suite", "humanevalfix", "--sandbox", "local", "--max-iterations", "1",
            "--base-url", scripted_llm.base_url, "--model", "scripted"
        ]) == 0
        assert len(_cells(out / "before")) == 2
    finally:
        subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", str(out / "trees" / head)],
                       check=False, capture_output=True)
