"""Judge a finished bench's green cells again (bench/correctness.py), from the change sets its run store kept.

    python benchmarks/rejudge.py OUT_DIR --suite humanevalfix [--suite-file F] [--sample 40 --sample-seed 0 [--stratify project]]
    python benchmarks/rejudge.py OUT_DIR --suite realbugs --suite-file benchmarks/data/realbugs/cases.jsonl ...

A verdict depends on the judge, not on the loop: when the judge changes, the loop's runs need not be
run again. Each green cell's change set is read back from `OUT_DIR/.bench/runs.sqlite3`, judged against
the task's reference fix in a Docker sandbox, and its `extra["verdict"]` replaced in
`.bench/results.jsonl` (the old file is kept as `results.jsonl.before-rejudge`). Then
`greenloop bench --report-only` with the same options writes the report again.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import shutil
import sys
from pathlib import Path
from typing import Any

from greenloop.agent.events import ChangeSet
from greenloop.agent.ports import open_sandbox_for
from greenloop.bench.correctness import Verdict, humanevalfix_verdict
from greenloop.bench.realbugs import unpack
from greenloop.bench.realbugs_run import verdict_in
from greenloop.bench.suites import Task, load_suite
from greenloop.run_records import RunStore
from greenloop.settings import Settings


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--suite", required=True)
    parser.add_argument("--suite-file", type=Path)
    parser.add_argument("--sample", type=int)
    parser.add_argument("--sample-seed", type=int, default=0)
    parser.add_argument("--stratify", help="the bench's --stratify (realbugs: project)")
    parser.add_argument("--task", action="append", help="only these tasks (all green ones when not given)")
    args = parser.parse_args(argv)
    state = args.out / ".bench"
    suite = load_suite(args.suite, args.suite_file, sample=args.sample, sample_seed=args.sample_seed,
                       stratify=args.stratify)
    tasks = {t.id: t for t in suite.tasks if not args.task or t.id in args.task}
    rows = [json.loads(line) for line in (state / "results.jsonl").read_text().splitlines() if line.strip()]
    store = RunStore.open(state / "runs.sqlite3")
    try:
        for row in rows:
            if row.get("outcome") != "green" or row.get("task") not in tasks or not row.get("run_id"):
                continue
            changes = _changes(store, row["run_id"])
            if changes is None:
                continue
            verdict = asyncio.run(_judge(tasks[row["task"]], changes))
            old = (row.get("extra", {}).get("verdict") or {}).get("name")
            row.setdefault("extra", {})["verdict"] = verdict.to_json()
            print(f"{row['config']} {row['task']}: {old} -> {verdict.name} ({verdict.reason[:100]})", flush=True)
    finally:
        store.close()
    shutil.copy(state / "results.jsonl", state / "results.jsonl.before-rejudge")
    (state / "results.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    return 0


def _changes(store: RunStore, run_id: str) -> ChangeSet | None:
    detail = store.get_run(run_id)
    done = next((e for e in reversed(detail.events) if e.get("kind") == "done"), None)
    return ChangeSet.model_validate(done["changes"]) if done and done.get("changes") else None


async def _judge(task: Task, changes: ChangeSet) -> Verdict:
    settings = Settings(sandbox={"backend": "docker"}, local_model={"enabled": False})
    if task.kind != "realbugs":
        return await humanevalfix_verdict(task.files, task.extra, changes, settings)
    import tempfile

    with tempfile.TemporaryDirectory(prefix="greenloop-rejudge-") as tmp:
        archive = Path(task.extra["archive"])
        workspace = unpack(archive, Path(tmp), task.id)
        files = {p.relative_to(workspace).as_posix(): p.read_bytes() for p in workspace.rglob("*") if p.is_file()}
        async with open_sandbox_for(settings, task.template, label=f"rejudge-{task.id}") as sandbox:
            installed: Any = await sandbox.install(list(task.extra["requirements"]))
            if not getattr(installed, "ok", False):
                return Verdict("unknown", "the case's requirements did not install")
            return await verdict_in(sandbox, files, changes, list(task.extra["tests"]), archive.parent / "fix.patch")


if __name__ == "__main__":
    sys.exit(main())
