"""`greenloop bench`: a suite under each step config N times; writes report.md/json and a plot."""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from contextlib import nullcontext
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.markup import escape
from rich.status import Status
from rich.table import Table

from greenloop.bench import (
    SUITES,
    BenchOptions,
    CellResult,
    ReportFiles,
    load_configs,
    run_bench,
    write_reports,
)
from greenloop.cli.common import common_parser, settings_from_args


def register(sub: Any, common: argparse.ArgumentParser) -> None:
    p = sub.add_parser(
        "bench", parents=[common_parser(settings_file=False)],  # its --config names step configs
        help="benchmark step configs on a suite", description=__doc__,
    )
    p.add_argument("--suite", required=True, choices=SUITES, help="which suite")
    p.add_argument("--suite-file", type=Path, help="the suite's JSONL file (default: the one in benchmarks/data, or benchmarks/suites for generate)")
    p.add_argument(
        "--config",
        dest="configs",
        action="append",
        type=Path,
        default=[],
        metavar="FILE.toml",
        help="a step config (partial settings TOML; repeatable; the first is the baseline)",
    )
    p.add_argument("--repeat", type=int, default=1, help="runs per task and config (default 1)")
    p.add_argument("--jobs", type=int, help="runs at once, each in its own sandbox (default 1; with --cluster, "
                   "the cluster's CPUs)")
    p.add_argument("--cluster", metavar="auto|HOST:PORT",
                   help="run the cells as Ray tasks on this Ray cluster (needs greenloop[cluster])")
    p.add_argument("--limit", type=int, help="only the first K tasks of the suite")
    p.add_argument("--sample", type=int, help="a fixed subset of N tasks, drawn with --sample-seed (before --limit)")
    p.add_argument("--sample-seed", type=int, default=0, help="seed of --sample's draw (default 0)")
    p.add_argument("--stratify", metavar="FIELD",
                   help="share --sample among the values of a task field by their sizes, at least one each "
                   "(realbugs: project)")
    p.add_argument(
        "--out", type=Path, help="report folder; rerun with the same folder to resume (default bench-SUITE)"
    )
    p.add_argument(
        "--retry-errors", action="store_true", help="on resume, rerun cells that ended in an error"
    )
    p.add_argument("--report-only", action="store_true", help="run nothing; rewrite the report from finished cells")
    p.add_argument("--json", action="store_true", help="print the summary as JSON")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    settings = settings_from_args(args, None)
    out_dir = (args.out or Path(f"bench-{args.suite}")).expanduser().resolve()
    options = BenchOptions(
        suite=args.suite,
        out_dir=out_dir,
        configs=load_configs([p.expanduser() for p in args.configs]),
        repeat=args.repeat,
        jobs=args.jobs if args.jobs is not None else (0 if args.cluster else 1),
        suite_file=args.suite_file,
        limit=args.limit,
        sample=args.sample,
        sample_seed=args.sample_seed,
        stratify=args.stratify,
        retry_errors=args.retry_errors,
        report_only=args.report_only,
        cluster=args.cluster,
    )
    console = Console(stderr=args.json)

    shown = console.status(f"cluster {escape(args.cluster)}: connecting") if args.cluster else nullcontext()

    def progress(result: CellResult, finished: int, total: int) -> None:
        console.print(progress_line(result, finished, total))

    def status(line: str) -> None:  # the live line under the finished cells: done, running, per node
        if isinstance(shown, Status):
            shown.update(f"cluster {escape(args.cluster)}: {escape(line)}")

    with shown:
        run_result = asyncio.run(run_bench(options, settings, progress=progress, status=status))
    if run_result.resumed:
        console.print(f"[dim]resumed: {run_result.resumed} finished cell(s) kept from earlier[/]")
    files = write_reports(run_result)
    if args.json:
        json.dump(json.loads(files.json.read_text(encoding="utf-8"))["configs"], sys.stdout, indent=2)
        sys.stdout.write("\n")
    else:
        _print_summary(console, files)
    return 0


def progress_line(result: CellResult, finished: int, total: int) -> str:
    """One finished cell as rich markup; names and errors are escaped (they may hold brackets)."""
    mark = "[green]pass[/]" if result.passed else f"[red]{escape(result.outcome)}[/]"
    extra = f" [dim]{escape(result.error[:100])}[/]" if result.error else ""
    node = f" on {escape(result.node)}" if result.node else ""
    return (
        f"\\[{finished}/{total}] {escape(result.config)} {escape(result.task)} #{result.repeat}: {mark} "
        f"({result.iterations} it, {result.tokens} tok, {result.seconds:.1f}s{node}){extra}"
    )


def _print_summary(console: Console, files: ReportFiles) -> None:
    table = Table("config", "runs", "pass rate", "95% CI", "mean it", "mean tokens", "mean cost", "mean s",
                  "median s to green", "p90 s to green", "cand/min")
    for s in files.summaries:
        table.add_row(
            s.config,
            str(s.runs),
            f"{s.pass_rate:.0%}",
            f"{s.ci_low:.0%}–{s.ci_high:.0%}",
            f"{s.mean_iterations:.2f}",
            f"{s.mean_tokens:.0f}",
            f"{s.mean_cost:.4f}",
            f"{s.mean_seconds:.1f}",
            "-" if s.median_seconds_to_green is None else f"{s.median_seconds_to_green:.1f}",
            "-" if s.p90_seconds_to_green is None else f"{s.p90_seconds_to_green:.1f}",
            f"{s.candidates_per_minute:.1f}",
        )
    console.print(table)
    console.print(f"report: {files.markdown}\n        {files.json}")
    if files.plot:
        console.print(f"plot:   {files.plot}")
