"""The own round against small-edit-ends at one commit, from a bench folder's cells and run store: green, right,
offered as done, wrong offered as done, the seconds the gates took and the seconds the own round added per task.

    python3 own_round_table.py BENCH_FOLDER [--tasks FILE]
"""

from __future__ import annotations

import argparse
import json
import re
import sqlite3
import statistics
from pathlib import Path

RIGHT = {"same", "equivalent"}
GATES = re.compile(r"The gates ran (\d+) test run\(s\) on the green change in ([0-9.]+) s")


def cells(folder: Path) -> list[dict]:
    path = folder / ".bench" / "results.jsonl" if (folder / ".bench").is_dir() else folder / "results.jsonl"
    rows = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    latest: dict[str, dict] = {}
    for row in rows:
        latest[row["key"]] = row
    return list(latest.values())


def gate_seconds(folder: Path, run_id: str) -> float | None:
    """The seconds the gates' runs took in one run (None: its run store is not kept beside the cells)."""
    store = folder / ".bench" / "runs.sqlite3"
    if not store.is_file():
        return None
    db = sqlite3.connect(store)
    total = 0.0
    for (data,) in db.execute("select data from events where run_id = ? and kind = 'message'", (run_id,)):
        if (m := GATES.search(json.loads(data).get("text", ""))) is not None:
            total += float(m.group(2))
    return total


def pct(values: list[float], q: float) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, round(q * (len(values) - 1)))] if values else 0.0


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("folder", type=Path)
    parser.add_argument("--tasks", type=Path)
    args = parser.parse_args()
    rows = cells(args.folder)
    if args.tasks:
        keep = set(args.tasks.read_text().split())
        rows = [r for r in rows if r["task"] in keep]
    by: dict[str, dict[str, dict]] = {}
    for r in rows:
        by.setdefault(r["config"], {})[r["task"]] = r
    tasks = sorted(set.intersection(*(set(v) for v in by.values())), key=lambda t: int(t.split("/")[-1]) if "/" in t else t)
    print(f"{len(tasks)} tasks with a cell in every config\n")
    print("| config | green | right (same + equivalent) | offered as done | right of those | **wrong offered as done** "
          "| gate s median | gate s p90 |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    for config, cell in sorted(by.items()):
        green = [cell[t] for t in tasks if cell[t]["outcome"] == "green"]
        verdict = {t: ((cell[t].get("extra") or {}).get("verdict") or {}).get("name", "") for t in tasks}
        done = [c for c in green if not (c.get("extra") or {}).get("risky")]
        right = [c for c in green if verdict[c["task"]] in RIGHT]
        right_done = [c for c in done if verdict[c["task"]] in RIGHT]
        found = [gate_seconds(args.folder, c["run_id"]) for c in green if c.get("run_id")]
        gates = [g for g in found if g is not None]
        said = f"{statistics.median(gates):.1f} | {pct(gates, 0.9):.1f}" if gates else "- | -"
        print(f"| {config} | {len(green)} | {len(right)} | {len(done)} | {len(right_done)} | **{len(done) - len(right_done)}** "
              f"| {said} |")
    if {"plain", "small-edit-ends"} <= set(by):
        added = [by["plain"][t]["seconds"] - by["small-edit-ends"][t]["seconds"] for t in tasks]
        base = [by["small-edit-ends"][t]["seconds"] for t in tasks]
        print(f"\nSeconds the own round adds per task (plain minus small-edit-ends): median {statistics.median(added):.1f}, "
              f"p90 {pct(added, 0.9):.1f} (small-edit-ends median {statistics.median(base):.1f})")
        print("\nTasks whose cells differ (outcome, kind, verdict, label):\n")
        for t in tasks:
            a, b = by["plain"][t], by["small-edit-ends"][t]
            ea, eb = a.get("extra") or {}, b.get("extra") or {}
            sa = (a["outcome"], ea.get("kind"), (ea.get("verdict") or {}).get("name"), bool(ea.get("risky")))
            sb = (b["outcome"], eb.get("kind"), (eb.get("verdict") or {}).get("name"), bool(eb.get("risky")))
            if sa != sb:
                print(f"- {t}: own round {sa[0]} {sa[1]} {sa[2]} {'plausible: ' + ea.get('risky', '') if sa[3] else 'done'}; "
                      f"small-edit-ends {sb[0]} {sb[1]} {sb[2]} {'plausible' if sb[3] else 'done'}")


if __name__ == "__main__":
    main()
