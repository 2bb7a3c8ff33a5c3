"""The ablation's cells paired by task: per config green, right, wrong offered as done and seconds, over the
tasks both configs finished, and the tasks on which the two differ.

    PYTHONPATH=server python3 docs/benchmarks/informed-requests-qwen1.5b/paired.py CELLS.jsonl [BASE OTHER]

BASE and OTHER are config names (default: plain, no-informed-requests). Right is the bench's verdict `same`
or `equivalent`; wrong offered as done is a green judged `differs` or `unknown` whose `risky` label is empty (bench/report.py's rule).
"""

from __future__ import annotations

import json
import statistics
import sys
from pathlib import Path
from typing import Any

from greenloop.bench.report import wilson_interval


def facts(row: dict[str, Any]) -> tuple[bool, bool, bool]:
    green = row["outcome"] == "green"
    verdict = (row["extra"].get("verdict") or {}).get("name")
    right = green and verdict in ("same", "equivalent")
    done_wrong = green and verdict in ("differs", "unknown") and not row["extra"].get("risky")
    return green, right, done_wrong


def main() -> None:
    path = Path(sys.argv[1])
    base, other = (sys.argv[2], sys.argv[3]) if len(sys.argv) > 3 else ("plain", "no-informed-requests")
    cells: dict[tuple[str, str], dict[str, Any]] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.strip():
            row = json.loads(line)
            cells[(row["task"], row["config"])] = row
    tasks = [t for t in dict.fromkeys(t for t, _ in cells) if (t, base) in cells and (t, other) in cells]
    print(f"{len(tasks)} tasks with both configs finished\n")
    print("| config | green | right | right, 95% CI | wrong offered as done | median s | total s |")
    print("|---|---:|---:|---|---:|---:|---:|")
    for config in (base, other):
        rows = [cells[(t, config)] for t in tasks]
        got = [facts(r) for r in rows]
        right = sum(f[1] for f in got)
        low, high = wilson_interval(right, len(rows))
        seconds = [r["seconds"] for r in rows]
        print(f"| {config} | {sum(f[0] for f in got)} | {right} | {low:.0%} - {high:.0%} | {sum(f[2] for f in got)} "
              f"| {statistics.median(seconds):.0f} | {sum(seconds):.0f} |")
    print("\nTasks where they differ (outcome, verdict):\n")
    for task in tasks:
        a, b = cells[(task, base)], cells[(task, other)]
        if facts(a) != facts(b):
            def say(row: dict[str, Any]) -> str:
                return f"{row['outcome']} {(row['extra'].get('verdict') or {}).get('name', '-')}"
            print(f"- {task}: {base} {say(a)}, {other} {say(b)}")


if __name__ == "__main__":
    main()
