"""realbugs with the project's own environment (what it declares, its lock file) against the set's hand pins.

For each case whose workspace is on disk (`cases/<id>/workspace.tar.gz`; the others are named and left
out), two fresh Docker sandboxes in one run:
- `hand`: the set's pins (its test tools and the row's `requirements`, bench/realbugs.py), installed as the
  realbugs bench does;
- `declared`: only the environment step (agent/environment/step.py: lock file, pinned requirements,
  declared ranges; the diagnosis and its bounded pytest search), as a user's first `greenloop fix` gets it.
Then the case's failing tests run; a case counts when they run and fail for the bug's reason (the
exception the recorded failing output names: bench/realbugs_run.not_red; for `declared`, the step's own
first run, as in a fix run). The environment step's seconds (its installs, the first run and any remedy)
are taken twice per case (first: layers built; cached: the same step again). Rows go to a JSONL file as
they finish (a rerun resumes); the table is printed at the end, labelled partial when cases are missing.

    nohup python3 benchmarks/environment_sources.py --out docs/benchmarks/environment-sources.jsonl \
        [--limit N] [--only ID,...] > /tmp/env-bench.log 2>&1 &
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import tempfile
import time
from itertools import zip_longest
from pathlib import Path
from typing import Any

from greenloop.agent.changes.working_copy import WorkingCopy
from greenloop.agent.environment.step import EnvironmentStep
from greenloop.agent.ports import SandboxPort, open_sandbox_for
from greenloop.bench.realbugs import CASE_TIMEOUT, TEST_TOOLS, expected_error, recorded_output, unpack
from greenloop.bench.realbugs_run import not_red
from greenloop.cli import stop_like_ctrl_c
from greenloop.settings import Settings, load_settings
from greenloop_sandbox import TestReport

SET = Path(__file__).resolve().parent / "data" / "realbugs"


async def _hand(port: SandboxPort, row: dict[str, Any], copy: WorkingCopy) -> str:
    installed = await port.install([*TEST_TOOLS, *row.get("requirements", [])])
    if not getattr(installed, "ok", False):
        return "not installed: " + (getattr(installed, "reason", "") or getattr(installed, "stderr", ""))[-300:]
    return ""


async def _declared(port: SandboxPort, copy: WorkingCopy, tests: list[str],
                    timeout: float) -> tuple[TestReport, float, str]:  # noqa: ASYNC109
    """The step as a fix run has it: prepare, the first run, its diagnosis; that run's report is the one judged
    (a second run in the same sandbox would meet the per-test limits the first one taught it)."""
    begun = time.monotonic()
    step = EnvironmentStep(port, copy)
    await step.prepare()
    await port.sync(copy.files())
    report, issue = await step.settle(await port.run_tests(tests, timeout=timeout), tests, timeout)
    event = step.event(issue)
    return report, time.monotonic() - begun, event.summary + (" | " + " | ".join(event.lines) if event.lines else "")


async def run_case(row: dict[str, Any], settings: Settings) -> dict[str, Any]:
    case_id, tests = row["id"], list(row["tests"])
    archive = SET / "cases" / case_id / "workspace.tar.gz"
    expected, recorded = expected_error(archive), recorded_output(archive)
    out: dict[str, Any] = {"id": case_id, "expected": expected}
    with tempfile.TemporaryDirectory(prefix="greenloop-envbench-") as tmp:
        ws = unpack(archive, Path(tmp), case_id)
        copy = WorkingCopy.from_workspace(ws)
        for config in ("hand", "declared", "declared-cached"):
            async with open_sandbox_for(settings, "python", label=f"envbench-{case_id}") as port:
                seconds, summary = 0.0, ""
                if config == "hand":
                    why = await _hand(port, row, copy)
                    if not why:
                        await port.sync(copy.files())
                        report = await port.run_tests(tests, timeout=settings.sandbox.test_timeout)
                        why = not_red(report, port.template.language.missing_module, expected, recorded)
                else:
                    report, seconds, summary = await _declared(port, copy, tests, settings.sandbox.test_timeout)
                    why = not_red(report, port.template.language.missing_module, expected, recorded)
                out[config] = {"runs_for_the_reason": not why, "why_not": why[:300], "seconds": round(seconds, 2),
                               "environment": summary[:600]}
    return out


def table(rows: list[dict[str, Any]], missing: list[str]) -> str:
    hand = sum(r["hand"]["runs_for_the_reason"] for r in rows)
    declared = sum(r["declared"]["runs_for_the_reason"] for r in rows)
    first = [r["declared"]["seconds"] for r in rows]
    cached = [r["declared-cached"]["seconds"] for r in rows]

    def p90(values: list[float]) -> float:
        return sorted(values)[max(0, round(0.9 * len(values)) - 1)] if values else 0.0

    lines = [f"realbugs, {len(rows)} case(s) run" + (f" (PARTIAL: {len(missing)} workspaces not on disk)" if missing else ""),
             "| environment | cases whose failing tests run and fail for the bug's reason |", "| --- | ---: |",
             f"| hand pins (the set's) | {hand}/{len(rows)} |",
             f"| declared only (environment step) | {declared}/{len(rows)} ({declared / hand:.0%} of hand) |" if hand else
             f"| declared only (environment step) | {declared}/{len(rows)} |",
             "", "| environment step seconds | median | p90 |", "| --- | ---: | ---: |",
             f"| first | {statistics.median(first) if first else 0:.1f} | {p90(first):.1f} |",
             f"| cached | {statistics.median(cached) if cached else 0:.1f} | {p90(cached):.1f} |"]
    return "\n".join(lines)


def main() -> int:
    stop_like_ctrl_c([])
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", type=Path, required=True, help="JSONL of finished cases (resumed)")
    parser.add_argument("--limit", type=int, default=0, help="at most this many cases on disk (0: all)")
    parser.add_argument("--only", default="", help="comma-separated case ids")
    parser.add_argument("--table", action="store_true", help="only print the table of the cases in --out")
    parser.add_argument("--seconds", type=float, default=0, help="start no case after this many seconds (0: no bound)")
    args = parser.parse_args()
    rows = [json.loads(line) for line in (SET / "cases.jsonl").read_text().splitlines() if line.strip()]
    if args.only:
        rows = [r for r in rows if r["id"] in set(args.only.split(","))]
    on_disk = [r for r in rows if (SET / "cases" / r["id"] / "workspace.tar.gz").is_file()]
    missing = [r["id"] for r in rows if r not in on_disk]
    by_project: dict[str, list[dict[str, Any]]] = {}
    for row in on_disk:  # round-robin over the projects, so that a bounded run covers each of them
        by_project.setdefault(str(row.get("project", "")), []).append(row)
    on_disk = [r for group in zip_longest(*by_project.values()) for r in group if r is not None]
    if args.limit:
        on_disk = on_disk[: args.limit]
    done = {json.loads(line)["id"]: json.loads(line) for line in args.out.read_text().splitlines()
            if line.strip()} if args.out.is_file() else {}
    settings = load_settings(SET, {"sandbox": {"backend": "docker", "test_timeout": 300,
                                                "test_case_timeout": CASE_TIMEOUT}})
    started = time.monotonic()
    for row in [] if args.table else on_disk:
        if row["id"] in done:
            continue
        if args.seconds and time.monotonic() - started > args.seconds:
            print(f"[envbench] stopped: {args.seconds:.0f}s spent", file=sys.stderr, flush=True)
            break
        print(f"[envbench] {row['id']} ...", file=sys.stderr, flush=True)
        try:  # SIGTERM cancels the case as Ctrl-C does: its sandboxes are removed, no container is left behind
            result = asyncio.run(run_case(row, settings))
        except KeyboardInterrupt:
            print(f"[envbench] stopped during {row['id']}", file=sys.stderr, flush=True)
            break
        done[row["id"]] = result
        with args.out.open("a") as fh:
            fh.write(json.dumps(result) + "\n")
    print(table([done[r["id"]] for r in on_disk if r["id"] in done], missing))
    return 0


if __name__ == "__main__":
    sys.exit(main())
