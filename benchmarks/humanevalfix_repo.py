"""Pack HumanEvalFix (Python) into one repository: 164 buggy modules plus their pytest tests.

Layout: `src/hef/t<NNN>.py` holds a task's declaration and buggy solution,
`tests/test_t<NNN>.py` its `check` function and one pytest test calling it.
Used by `bench_locate.py` and the retrieval tests; the ground truth of each
task is its `entry_point` function in its module.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

DATA = Path(__file__).resolve().parent / "data" / "humanevalfix" / "humanevalfix-python.jsonl"


@dataclass(frozen=True)
class Task:
    number: int
    entry_point: str
    module: str  # workspace-relative path of the buggy module
    test_file: str
    test_name: str


def load_rows(path: Path = DATA) -> list[dict[str, str]]:
    if not path.is_file():
        raise FileNotFoundError(f"{path} is missing: the HumanEvalFix data lives in benchmarks/data/humanevalfix")
    return [json.loads(line) for line in path.read_text("utf-8").splitlines() if line.strip()]


def _test_source(row: dict[str, str], number: int) -> str:
    entry = row["entry_point"]
    body = re.sub(rf"\n\s*check\({re.escape(entry)}\)\s*$", "\n", row["test"].rstrip())
    return (
        f"from hef.t{number:03d} import *  # noqa: F403\n"
        f"from hef.t{number:03d} import {entry}\n\n"
        f"{body.strip()}\n\n\n"
        f"def test_{entry}():\n"
        f"    check({entry})\n"
    )


def write_repo(root: Path, rows: list[dict[str, str]] | None = None) -> list[Task]:
    """Write the packed repository under `root`; return the tasks' ground truth."""
    rows = load_rows() if rows is None else rows
    (root / "src" / "hef").mkdir(parents=True, exist_ok=True)
    (root / "tests").mkdir(exist_ok=True)
    (root / "src" / "hef" / "__init__.py").write_text('"""HumanEvalFix tasks, one module each."""\n')
    (root / "pyproject.toml").write_text('[tool.pytest.ini_options]\npythonpath = ["src"]\ntimeout = 3\n')
    tasks: list[Task] = []
    for row in rows:
        number = int(row["task_id"].split("/")[1])
        module = f"src/hef/t{number:03d}.py"
        test_file = f"tests/test_t{number:03d}.py"
        (root / module).write_text(row["declaration"] + row["buggy_solution"])
        (root / test_file).write_text(_test_source(row, number))
        tasks.append(Task(number, row["entry_point"], module, test_file, f"test_{row['entry_point']}"))
    return tasks


def run_pytest(root: Path, *args: str, timeout: float = 600) -> str:
    """Run pytest on the packed repo; return its combined output."""
    command = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-p", "pytest_timeout", "--timeout=3",
               "-q", "tests", *args]
    # only the plugin it needs (faster start); a pinned hash seed, so that set reprs in the failures (which
    # the BM25 baseline reads) do not change with the caller's hash seed
    env = {**os.environ, "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1", "PYTHONHASHSEED": "0"}
    done = subprocess.run(command, cwd=root, capture_output=True, text=True, timeout=timeout, check=False, env=env)
    return done.stdout + done.stderr


def split_failures(output: str) -> list[tuple[str, str]]:
    """pytest's failure sections, in order, as (test name, section text)."""
    sections: list[tuple[str, str]] = []
    parts = re.split(r"^_{3,} (\S+) _{3,}\s*$", output, flags=re.M)
    for name, body in zip(parts[1::2], parts[2::2], strict=True):
        text = re.split(r"^=+ short test summary info =+$", body, flags=re.M)[0]
        sections.append((name, f"____ {name} ____\n{text}"))
    return sections


def task_of(section: str, tasks: list[Task]) -> Task | None:
    """The task a failure section belongs to, by the test file it names."""
    match = re.search(r"tests/test_t(\d{3})\.py", section)
    if match is None:
        return None
    number = int(match.group(1))
    return next((t for t in tasks if t.number == number), None)
