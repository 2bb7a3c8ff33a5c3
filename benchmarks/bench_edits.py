"""Small edits alone on HumanEvalFix: how many bugs one tree-sitter edit of the function makes green.

    python benchmarks/bench_edits.py [--sample 40] [--sample-seed 0] [--limit 200] [--write FILE]
                                     [--suite-file benchmarks/data/humanevalfix/humanevalfix-python.jsonl]

The fix loop tries `agent.repair.small_edit_candidates` before it asks a model (`loop.small_edits` of them, default 60).
This measures that step without Docker or a model, in minutes: each task's buggy function gets its edits
in the loop's order, each is spliced in as the loop splices it, and the task's tests run in a fresh
python process on the host (one at a time, 10 s each) until the first edit that passes them all.
Reported: fixed within the loop's budget and within `--limit` (the same run: the budget's baseline),
the rank of the first green edit, by bug type, and the edits and test seconds spent.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from dataclasses import asdict, dataclass
from pathlib import Path

from greenloop.agent.changes.syntax import parse
from greenloop.agent.repair.small_edit_candidates import small_edit_replies
from greenloop.agent.repair.splice import Target, definition_node, splice
from greenloop.bench.suites import Task, load_suite
from greenloop.retrieval import parse_frames
from greenloop.settings import LoopSettings

RUN_TESTS = """
import importlib, sys
module = importlib.import_module(sys.argv[1])
for name in dir(module):
    if name.startswith("test_"):
        getattr(module, name)()
"""
SECONDS = 10.0


@dataclass
class Row:
    task: str
    bug_type: str
    edits: int = 0  # the edits found, up to the limit
    first: int | None = None  # rank of the first green edit
    tested: int = 0
    seconds: float = 0.0  # spent running tests
    hot: int = 0  # lines of the function in the buggy code's tracebacks (the loop ranks edits on them first)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sample", type=int, default=None, help="a seeded subset of this many tasks")
    parser.add_argument("--sample-seed", type=int, default=0)
    parser.add_argument("--limit", type=int, default=200, help="edits per task at most (the loop's budget is within)")
    parser.add_argument("--write", type=Path, help="the per-task rows as JSON")
    parser.add_argument("--suite-file", type=Path, help="HumanEvalFix as JSONL (default: the bench's)")
    args = parser.parse_args(argv)
    budget = LoopSettings().small_edits
    suite = load_suite("humanevalfix", args.suite_file, sample=args.sample, sample_seed=args.sample_seed)
    rows = []
    for task in suite.tasks:
        row = _task(task, max(args.limit, budget))
        rows.append(row)
        print(f"{row.task:<12} {row.bug_type:<16} edits {row.edits:>3}  first green {row.first}", flush=True)
    print(_table(rows, budget, max(args.limit, budget)))
    if args.write:
        args.write.write_text(json.dumps([asdict(r) for r in rows], indent=1) + "\n")
    return 0


def _task(task: Task, limit: int) -> Row:
    name = str(task.extra["entry_point"])
    path = f"{name}.py"
    source = task.files[path]
    tree = parse(path, source)
    node = definition_node(tree, name) if tree is not None else None
    row = Row(task.id, str(task.extra.get("bug_type", "")))
    if node is None:
        return row
    target = Target(path, name, "function", node.start_point[0] + 1, node.end_point[0] + 1)
    tests = {p: c for p, c in task.files.items() if p != path}
    hot = _hot_lines(task.files, target)
    replies = small_edit_replies(source, target, limit, hot)
    row.edits, row.hot = len(replies), len(hot)
    started = time.perf_counter()
    for rank, reply in enumerate(replies, start=1):
        edited = source
        for action in splice(source, target, reply):
            edited = edited.replace(action.search, action.replace, 1)
        row.tested = rank
        if _passes({**tests, path: edited}):
            row.first = rank
            break
    row.seconds = round(time.perf_counter() - started, 2)
    return row


def _hot_lines(files: dict[str, str], target: Target) -> set[int]:
    """The function's lines in the tracebacks of the buggy code's tests, as the loop finds them."""
    output = _run(files)[1]
    return {f.line for f in parse_frames(output, list(files))
            if f.path == target.path and target.start_line <= f.line <= target.end_line}


def _passes(files: dict[str, str]) -> bool:
    return _run(files)[0]


def _run(files: dict[str, str]) -> tuple[bool, str]:
    """(all tests passed, their output) in a fresh python per test module."""
    with tempfile.TemporaryDirectory(prefix="greenloop-edits-") as tmp:
        for rel, text in files.items():
            (Path(tmp) / rel).write_text(text)
        modules = [Path(p).stem for p in files if Path(p).name.startswith("test_")]
        output = ""
        for module in modules:
            try:
                done = subprocess.run([sys.executable, "-c", RUN_TESTS, module], cwd=tmp, capture_output=True,
                                      text=True, timeout=SECONDS)
            except subprocess.TimeoutExpired:
                return False, output
            output += done.stderr
            if done.returncode != 0:
                return False, output
        return True, output


def _table(rows: list[Row], budget: int, limit: int) -> str:
    def fixed(within: int, of: list[Row]) -> int:
        return sum(1 for r in of if r.first is not None and r.first <= within)

    ranks = sorted(r.first for r in rows if r.first is not None)
    lines = [f"tasks {len(rows)}: fixed within the loop's {budget} edits {fixed(budget, rows)}, "
             f"within {limit} {fixed(limit, rows)}; rank of the first green edit: median "
             f"{statistics.median(ranks) if ranks else '-'}, max {max(ranks) if ranks else '-'}; edits per task "
             f"median {statistics.median(r.edits for r in rows)}; test seconds {sum(r.seconds for r in rows):.0f}",
             "", f"| bug type | tasks | fixed within {budget} | within {limit} |", "|---|---:|---:|---:|"]
    kinds = Counter(r.bug_type for r in rows)
    for kind, count in kinds.most_common():
        of = [r for r in rows if r.bug_type == kind]
        lines.append(f"| {kind} | {count} | {fixed(budget, of)} | {fixed(limit, of)} |")
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())
