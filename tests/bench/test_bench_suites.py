"""Suite files become tasks: HumanEvalFix rows turn into tiny workspaces whose tests fail, then pass when fixed."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from greenloop.bench import load_suite
from greenloop.bench.suites import default_suite_file
from greenloop.errors import GreenloopError

HEF = default_suite_file("humanevalfix")


def _write(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    return root


def _pytest(*dirs: Path, timeout: int = 20) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            "--timeout",
            str(timeout),
            *map(str, dirs),
        ],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=dirs[0].parent,
    )


def test_every_humanevalfix_task_passes_with_the_canonical_fix(tmp_path: Path) -> None:
    suite = load_suite("humanevalfix")
    assert len(suite.tasks) == 164 and suite.skipped == []
    # a few entry points repeat across tasks; one pytest process per batch of distinct module names
    batches: list[list[Path]] = [[], []]
    for i, task in enumerate(suite.tasks):
        entry = task.extra["entry_point"]
        files = dict(task.files) | {f"{entry}.py": task.extra["fixed"]}
        batch = batches[0] if all(d.name != entry for d in batches[0]) else batches[1]
        batch.append(_write(tmp_path / f"fixed-{i}" / entry, files))
    passed = 0
    for batch in batches:
        proc = _pytest(*batch)
        assert proc.returncode == 0, proc.stdout[-3000:]
        passed += int(proc.stdout.strip().splitlines()[-1].split()[0])
    assert passed == 164


def test_buggy_workspaces_fail(tmp_path: Path) -> None:
    suite = load_suite("humanevalfix")
    sample = suite.tasks[::16]
    dirs = [_write(tmp_path / "buggy" / t.extra["entry_point"], t.files) for t in sample]
    proc = _pytest(*dirs, timeout=3)  # some buggy solutions never return
    assert f"{len(sample)} failed" in proc.stdout, proc.stdout[-3000:]


def test_bad_rows_are_skipped_and_reported(tmp_path: Path) -> None:
    good = HEF.read_text().splitlines()[:2]
    rows = [
        good[0],
        "{not json",
        json.dumps({"task_id": "X/1", "entry_point": "f"}),  # no code
        json.dumps(["a", "list"]),
        json.dumps(json.loads(good[0]) | {"entry_point": "not a name"}),
        "",
        good[0],  # duplicate id
        good[1],
    ]
    path = tmp_path / "suite.jsonl"
    path.write_text("\n".join(rows) + "\n")
    suite = load_suite("humanevalfix", path)
    assert [t.id for t in suite.tasks] == ["Python/0", "Python/1"]
    assert [s.split(":")[0] for s in suite.skipped] == ["line 2", "line 3", "line 4", "line 5", "line 7"]
    assert "missing or empty 'declaration'" in suite.skipped[1]
    assert "duplicate" in suite.skipped[4]


def test_generate_prompts_file() -> None:
    suite = load_suite("generate")
    assert len(suite.tasks) == 10 and suite.skipped == []
    assert len({t.id for t in suite.tasks}) == 10
    assert all(t.kind == "generate" and t.template == "python" and len(t.prompt) > 40 for t in suite.tasks)


def test_limit_missing_file_and_unknown_suite(tmp_path: Path) -> None:
    assert len(load_suite("humanevalfix", limit=3).tasks) == 3
    with pytest.raises(GreenloopError, match="--suite-file"):
        load_suite("humanevalfix", tmp_path / "nope.jsonl")
    with pytest.raises(GreenloopError, match="unknown suite"):
        load_suite("mbpp")
    empty = tmp_path / "empty.jsonl"
    empty.write_text("{}\n")
    with pytest.raises(GreenloopError, match="no usable tasks"):
        load_suite("generate", empty)
