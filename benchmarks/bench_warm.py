"""Warm test runs against cold ones: the same pass/fail per test for every candidate, and the seconds each takes.

    nice -n 10 python benchmarks/bench_warm.py [--out FILE] [--hef N] [--edits N] [--cases ID,...] [--cpus N]

Candidates are the small edits (`agent.repair.small_edit_candidates.small_edits`) of each bug's function, no model:
HumanEvalFix (all tasks packed in one repository, `humanevalfix_repo.py`; each candidate runs its task's
test) and realbugs cases (each in its own sandbox with its requirements installed; each candidate runs the
case's failing tests). Each candidate is synced to two Docker sandboxes of the same image, one with warm
runs off and one with them on, and run in both, cold first; the per-test outcomes (and counts and exit
code) must be equal. Every test gets the same fixed limit in both (`case_timeout_factor = 0`), so a
limit learnt from a slightly different time cannot make them differ. Rows go to `--out` (JSONL) as they
come; a rerun skips the candidates already there. The table: candidates, disagreements, and per project
the median seconds per candidate cold and warm, as the sandbox's caller waits for them (the test run; rows
also hold each sync's seconds, `cold_sync_s` and `warm_sync_s`, and the table their sum with the run's).
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import humanevalfix_repo
import realbugs
from greenloop.agent.changes.syntax import parse
from greenloop.agent.repair.small_edit_candidates import small_edits
from greenloop.agent.repair.splice import Target, code_blocks, definition_node
from greenloop.bench.realbugs import unpack
from greenloop.retrieval import parse_frames
from greenloop_sandbox import Limits, Sandbox, TestReport, open_sandbox, read_tree

OUT = Path("docs/benchmarks/warm-runs/rows.jsonl")
DEFAULT_CASES = "black-7,cookiecutter-git-7322abda,tqdm-git-55156ce4"
HEF_LIMITS = Limits(test_case_timeout=3, case_timeout_factor=0, test_timeout=120)
REALBUGS_LIMITS = Limits(test_case_timeout=20, case_timeout_factor=0, test_timeout=300)


def outcomes(report: TestReport) -> dict[str, Any]:
    """What must be equal: each test's outcome, the failures' ids, the counts, the exit code, a timeout."""
    return {"cases": sorted([c.test_id, c.outcome] for c in report.cases),
            "failures": sorted([f.test_id, f.kind] for f in report.failures),
            "counts": [report.passed, report.failed, report.errors, report.skipped],
            "exit": report.exit_code, "timed_out": report.timed_out}


def splice(source: str, path: str, name: str, line: int | None, new: str) -> str | None:
    """`source` with the def called `name` (from the start of its line) replaced by `new`."""
    tree = parse(path, source)
    node = (definition_node(tree, name, line) or definition_node(tree, name)) if tree is not None else None
    if node is None:
        return None
    data = source.encode("utf-8")
    first = data.rfind(b"\n", 0, node.start_byte) + 1
    return (data[:first] + new.rstrip("\n").encode("utf-8") + data[node.end_byte:]).decode("utf-8")


def candidates(source: str, target: Target, limit: int, hot: set[int]) -> Iterator[tuple[str, str]]:
    """(kind, edited file) for each small edit of the target."""
    for reply, kind in small_edits(source, target, limit, hot):
        edited = splice(source, target.path, target.name, target.start_line, code_blocks(reply)[0])
        if edited is not None and edited != source:
            yield kind, edited


class Bench:
    def __init__(self, out: Path) -> None:
        self.out = out
        self.done: set[tuple[str, str, int]] = set()
        if out.is_file():
            for line in out.read_text().splitlines():
                row = json.loads(line)
                self.done.add((row["suite"], row["case"], row["n"]))

    async def compare(self, suite: str, case: str, n: int, kind: str, cold: Sandbox, warm: Sandbox,
                      files: dict[str, bytes], tests: list[str]) -> None:
        if (suite, case, n) in self.done:
            return
        row: dict[str, Any] = {"suite": suite, "case": case, "n": n, "kind": kind}
        for label, box in (("cold", cold), ("warm", warm)):
            start = time.monotonic()
            await box.sync(files)
            row[f"{label}_sync_s"] = round(time.monotonic() - start, 3)
            start = time.monotonic()
            report = await box.run_tests(tests)
            row[f"{label}_s"] = round(time.monotonic() - start, 3)
            row[label] = outcomes(report)
        row["agree"] = row["cold"] == row["warm"]
        state = warm.warm  # type: ignore[attr-defined]
        row["warm_state"] = {"warm": state.warm, "cold": state.cold, "off": state.off}
        with self.out.open("a") as fh:
            fh.write(json.dumps(row) + "\n")
        self.done.add((suite, case, n))
        if not row["agree"]:
            print(f"DISAGREE {suite} {case} #{n} {kind}: cold {row['cold']} warm {row['warm']}", flush=True)


async def humanevalfix(bench: Bench, tasks: int, edits: int, limits: Limits = HEF_LIMITS) -> None:
    with tempfile.TemporaryDirectory(prefix="bench-warm-hef-") as tmp:
        root = Path(tmp)
        hef = humanevalfix_repo.write_repo(root)[:tasks]
        base = dict(read_tree(root))
        async with open_sandbox("python", backend="docker", limits=limits) as cold, \
                open_sandbox("python", backend="docker", limits=limits, warm_runs=True) as warm:
            for task in hef:
                source = base[task.module].decode("utf-8")
                target = Target(task.module, task.entry_point, "function", 1, len(source.splitlines()))
                test = f"{task.test_file}::{task.test_name}"
                for n, (kind, edited) in enumerate(candidates(source, target, edits, set())):
                    files = {**base, task.module: edited.encode("utf-8")}
                    await bench.compare("humanevalfix", f"t{task.number:03d}", n, kind, cold, warm, files, [test])
            print(f"humanevalfix: warm {warm.warm.__dict__}", flush=True)  # type: ignore[attr-defined]


async def realbugs_case(bench: Bench, case: realbugs.Case, edits: int, limits: Limits = REALBUGS_LIMITS) -> None:
    row = next(json.loads(line) for line in (realbugs.DATA / "cases.jsonl").read_text().splitlines()
               if json.loads(line)["id"] == case.id)
    truth = case.truth[0]
    with tempfile.TemporaryDirectory(prefix="bench-warm-rb-") as tmp:
        workspace = unpack(case.folder / "workspace.tar.gz", Path(tmp), case.id)
        base = dict(read_tree(workspace))
        source = base[truth.path].decode("utf-8")
        target = Target(truth.path, truth.symbol, "function", truth.start, truth.end)
        hot = {f.line for f in parse_frames(case.output, [truth.path])
               if f.path == truth.path and truth.start <= f.line <= truth.end}
        edited = list(candidates(source, target, edits, hot))
        async with open_sandbox("python", backend="docker", limits=limits) as cold, \
                open_sandbox("python", backend="docker", limits=limits, warm_runs=True) as warm:
            for box in (cold, warm):
                if row["requirements"]:
                    installed = await box.install(list(row["requirements"]))
                    if not installed.ok:
                        print(f"{case.id}: install failed: {installed.stderr[-300:]}", flush=True)
                        return
            for n, (kind, text) in enumerate(edited):
                files = {**base, truth.path: text.encode("utf-8")}
                await bench.compare("realbugs", case.id, n, kind, cold, warm, files, list(case.tests))
            print(f"{case.id}: {len(edited)} candidates; warm {warm.warm.__dict__}", flush=True)  # type: ignore[attr-defined]


async def humanevalfix_batched(bench: Bench, tasks: int, edits: int, limits: Limits = HEF_LIMITS) -> None:
    """Round k holds each task's k-th small edit at once (a task's test imports its own module only): one
    whole-suite run, cold and warm, compares every task's candidate by its own test's outcome."""
    with tempfile.TemporaryDirectory(prefix="bench-warm-hef-") as tmp:
        root = Path(tmp)
        hef = humanevalfix_repo.write_repo(root)[:tasks]
        base = dict(read_tree(root))
        edited: dict[int, list[tuple[str, str]]] = {}
        for task in hef:
            source = base[task.module].decode("utf-8")
            target = Target(task.module, task.entry_point, "function", 1, len(source.splitlines()))
            edited[task.number] = list(candidates(source, target, edits, set()))
        async with open_sandbox("python", backend="docker", limits=limits) as cold, \
                open_sandbox("python", backend="docker", limits=limits, warm_runs=True) as warm:
            for k in range(edits):
                batch = [t for t in hef if len(edited[t.number]) > k
                         and ("humanevalfix-batched", f"t{t.number:03d}", k) not in bench.done]
                if not batch:
                    continue
                files = {**base, **{t.module: edited[t.number][k][1].encode("utf-8") for t in batch}}
                seen: dict[str, dict[str, Any]] = {}
                took: dict[str, float] = {}
                for label, box in (("cold", cold), ("warm", warm)):
                    await box.sync(files)
                    start = time.monotonic()
                    report = await box.run_tests()
                    took[label] = time.monotonic() - start
                    seen[label] = {"whole": {k2: v for k2, v in outcomes(report).items() if k2 not in ("cases", "failures")},
                                   "cases": {c.test_id: c.outcome for c in report.cases},
                                   "failures": {f.test_id: f.kind for f in report.failures}}
                whole_agree = seen["cold"]["whole"]["counts"] == seen["warm"]["whole"]["counts"]
                state = warm.warm  # type: ignore[attr-defined]
                with bench.out.open("a") as fh:
                    for t in batch:
                        test = f"{t.test_file}::{t.test_name}"
                        row: dict[str, Any] = {"suite": "humanevalfix-batched", "case": f"t{t.number:03d}", "n": k,
                                               "kind": edited[t.number][k][0], "batch": len(batch),
                                               "cold_s": round(took["cold"] / len(batch), 4),
                                               "warm_s": round(took["warm"] / len(batch), 4)}
                        for label in ("cold", "warm"):
                            row[label] = [seen[label]["cases"].get(test), seen[label]["failures"].get(test)]
                        row["agree"] = row["cold"] == row["warm"] and whole_agree
                        row["warm_state"] = {"warm": state.warm, "cold": state.cold, "off": state.off}
                        fh.write(json.dumps(row) + "\n")
                        if not row["agree"]:
                            print(f"DISAGREE t{t.number:03d} #{k}: cold {row['cold']} warm {row['warm']} "
                                  f"({seen['cold']['whole']} / {seen['warm']['whole']})", flush=True)
                print(f"humanevalfix round {k}: {len(batch)} candidates, cold {took['cold']:.1f}s, "
                      f"warm {took['warm']:.1f}s; warm {state.__dict__}", flush=True)


def table(files: list[Path]) -> str:
    rows = [json.loads(line) for out in files for line in out.read_text().splitlines()]
    lines = ["| suite / project | candidates | disagreements | cold s/candidate (median) | warm s/candidate (median) | ratio "
             "| with the sync: cold / warm s (median) | ratio |", "|---|---|---|---|---|---|---|---|"]
    groups: dict[str, list[dict[str, Any]]] = {}
    for row in rows:
        key = row["suite"] if row["suite"].startswith("humanevalfix") else row["case"].rsplit("-", 1)[0].replace("-git", "")
        groups.setdefault(key, []).append(row)
    for key, group in sorted(groups.items()):
        cold = statistics.median(r["cold_s"] for r in group)
        warm = statistics.median(r["warm_s"] for r in group)
        synced = [r for r in group if "cold_sync_s" in r]
        both = ""
        if synced:
            cold_all = statistics.median(r["cold_s"] + r["cold_sync_s"] for r in synced)
            warm_all = statistics.median(r["warm_s"] + r["warm_sync_s"] for r in synced)
            both = f"{cold_all:.3f} / {warm_all:.3f} | {cold_all / warm_all:.1f}x"
        lines.append(f"| {key} | {len(group)} | {sum(not r['agree'] for r in group)} | {cold:.3f} | {warm:.3f} | "
                     f"{cold / warm:.1f}x | {both or '| '} |")
    lines.append(f"| all | {len(rows)} | {sum(not r['agree'] for r in rows)} | | | | | |")  # seconds: per project only
    return "\n".join(lines)


async def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=OUT)
    parser.add_argument("--hef", type=int, default=164, help="HumanEvalFix tasks (0: none)")
    parser.add_argument("--hef-edits", type=int, default=3, help="small edits per HumanEvalFix task")
    parser.add_argument("--edits", type=int, default=30, help="small edits per realbugs case")
    parser.add_argument("--cases", default=DEFAULT_CASES, help="realbugs case ids, comma-separated ('' : none)")
    parser.add_argument("--batched", action="store_true", help="HumanEvalFix: one candidate per task in each run")
    parser.add_argument("--cpus", type=float, default=REALBUGS_LIMITS.cpus, help="each sandbox's cores")
    parser.add_argument("--table", nargs="+", type=Path, help="only print the table of these rows files")
    args = parser.parse_args(argv)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    if args.table:
        print(table(args.table))
        return 0
    bench = Bench(args.out)
    commit = subprocess.run(  # noqa: ASYNC221 (once, before anything runs)
        ["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
    print(f"commit {commit}, load {os.getloadavg()}, cpus {args.cpus:g}", flush=True)
    ids = [i for i in args.cases.split(",") if i]
    cases = {c.id: c for c in realbugs.load_cases(ids=set(ids))}
    for case_id in ids:  # in the order given
        await realbugs_case(bench, cases[case_id], args.edits, dataclasses.replace(REALBUGS_LIMITS, cpus=args.cpus))
    if args.hef and args.batched:
        await humanevalfix_batched(bench, args.hef, args.hef_edits, dataclasses.replace(HEF_LIMITS, cpus=args.cpus))
    elif args.hef:
        await humanevalfix(bench, args.hef, args.hef_edits, dataclasses.replace(HEF_LIMITS, cpus=args.cpus))
    print(f"load {os.getloadavg()}", flush=True)
    print(table([args.out]))
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
