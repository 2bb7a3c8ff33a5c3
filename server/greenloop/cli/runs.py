"""`greenloop runs list | show ID | stats | verdict ID WORD | export --out FILE`: read the run store."""

from __future__ import annotations

import argparse
import datetime
import json
import sys
from pathlib import Path
from typing import Any

from pydantic import TypeAdapter, ValidationError
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from greenloop.agent.events import Event
from greenloop.agent.orchestration.describe import describe
from greenloop.cli.common import settings_from_args
from greenloop.cli.run_list import run_list_table
from greenloop.errors import GreenloopError
from greenloop.run_records import VERDICTS, RunDetail, RunStore, StatsRow, record_verdict, store_path
from greenloop.run_records.stats import GROUP_COLUMNS


def register(sub: Any, common: argparse.ArgumentParser) -> None:
    p = sub.add_parser(
        "runs", parents=[common], help="recorded runs: list, show, stats, export", description=__doc__
    )
    p.add_argument(
        "--workspace", "-C", type=Path, default=Path("."), help="project whose store to read (default: .)"
    )
    p.add_argument("--store", type=Path, help="the SQLite run store to read (default: from settings)")
    p.add_argument("--json", action="store_true", help="print JSON instead of tables")
    actions = p.add_subparsers(dest="runs_command", metavar="ACTION", required=True)
    ls = actions.add_parser("list", help="the newest runs")
    ls.add_argument("--limit", type=int, default=20, help="how many (default 20)")
    show = actions.add_parser("show", help="everything recorded about one run")
    show.add_argument("run_id", help="a run id or a unique prefix of one")
    stats = actions.add_parser("stats", help="success rate, iterations, tokens, cost and latency by group")
    stats.add_argument(
        "--by", default="model,config", help=f"comma-separated group keys from {sorted(GROUP_COLUMNS)}"
    )
    verdict = actions.add_parser("verdict", help="record whether a run's result ran / worked / was perfect")
    verdict.add_argument("run_id")
    verdict.add_argument("verdict", choices=[*VERDICTS, "skip"])
    export = actions.add_parser("export", help="successful fixes as JSONL prompt/completion pairs (opt-in)")
    export.add_argument("--out", type=Path, required=True, help="the JSONL file to write")
    export.add_argument("--yes", action="store_true", help="do not ask before writing")
    export.add_argument(
        "--mode",
        action="append",
        choices=["fix", "improve", "generate"],
        help="run modes (default fix, improve)",
    )
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    workspace = args.workspace.expanduser().resolve()
    settings = settings_from_args(args, workspace if workspace.is_dir() else None)
    if args.store is not None:
        settings.runs.store = str(args.store.expanduser().resolve())
    path = store_path(settings, workspace)
    console = Console(stderr=args.json)
    if not path.exists():
        if args.runs_command in ("show", "export", "verdict"):
            raise GreenloopError(f"no run store at {path}; run `greenloop fix` first or pass --store")
        console.print(f"[dim]no runs recorded yet ({escape(str(path))} does not exist)[/]")
        if args.json:
            print("[]")
        return 0
    if args.runs_command == "verdict":
        record_verdict(settings, workspace, args.run_id, args.verdict)
        console.print(f"recorded {args.verdict} for {args.run_id}")
        return 0
    with RunStore.open(path) as store:
        return _dispatch(args, store, console)


def _dispatch(args: argparse.Namespace, store: RunStore, console: Console) -> int:
    if args.runs_command == "list":
        runs = store.list_runs(limit=args.limit)
        if args.json:
            return _print_json([r.model_dump(mode="json") for r in runs])
        console.print(run_list_table(runs, console.width))
        return 0
    if args.runs_command == "show":
        detail = store.get_run(args.run_id)
        if args.json:
            return _print_json(detail.model_dump(mode="json"))
        _show(detail, console)
        return 0
    if args.runs_command == "stats":
        rows = store.stats(by=[key.strip() for key in args.by.split(",") if key.strip()])
        if args.json:
            return _print_json([r.model_dump(mode="json") for r in rows])
        console.print(stats_table(rows))
        return 0
    return _export(args, store, console)


def _export(args: argparse.Namespace, store: RunStore, console: Console) -> int:
    out: Path = args.out.expanduser().resolve()
    if not args.yes:
        if not sys.stdin.isatty():
            raise GreenloopError("export writes model prompts and replies to a file; pass --yes to confirm")
        note = " (it exists and will be replaced)" if out.exists() else ""
        answer = console.input(f"Write the prompts and replies of successful fixes to {out}{note}? [y/N] ")
        if answer.strip().lower() not in ("y", "yes"):
            console.print("nothing written")
            return 1
    count = store.export_pairs(out, modes=args.mode or ("fix", "improve"))
    if args.json:
        return _print_json({"out": str(out), "pairs": count})
    console.print(f"wrote {count} prompt/completion pair(s) to {out} (nothing left this machine)")
    return 0


def stats_table(rows: list[StatsRow]) -> Table:
    keys = list(rows[0].group) if rows else []
    table = Table(
        *keys, "runs", "green", "success", "iter", "tokens", "cost", "secs p50/p90", "call p50/p90/p99"
    )
    for r in rows:
        table.add_row(
            *r.group.values(),
            str(r.runs),
            str(r.green),
            f"{r.success_rate:.0%}",
            f"{r.iterations_mean:.2f}",
            f"{r.tokens_mean:.0f}",
            f"{r.cost_total:.4f}",
            f"{_num(r.seconds_p50)}/{_num(r.seconds_p90)}",
            f"{_num(r.latency_p50)}/{_num(r.latency_p90)}/{_num(r.latency_p99)}",
        )
    return table


def _show(d: RunDetail, console: Console) -> None:
    console.print(f"[bold]{escape(d.id)}[/]  {d.mode}  {d.outcome or 'unfinished'}  ({_when(d.started_at)})")
    console.print(escape(f"workspace {d.workspace}  model {d.model}  config {d.config_name}  seed {d.seed}"))
    console.print(
        f"{d.iterations} iteration(s), {d.prompt_tokens}+{d.completion_tokens} tokens, "
        f"${d.cost:.4f}, {_num(d.seconds)} s  verdict: {d.verdict or '-'} {d.note}"
    )
    if d.summary:
        console.print(d.summary)
    events = Table("at", "event", "detail", title="events")
    for e in d.events:
        events.add_row(f"{float(e.get('at', 0.0)):.1f}", str(e.get("kind")), _event_detail(e))
    console.print(events)
    installs = _installs(d.events)
    if installs:
        table = Table("package", "version", "why", "built", "file", "sha256", title="installs")
        for row in installs:
            built = "in the sandbox, from its sdist" if row.get("built") == "sandbox" else "wheel from the index"
            table.add_row(str(row.get("name")), str(row.get("version")), str(row.get("origin")), built,
                          str(row.get("filename", "")), str(row.get("sha256", "")))
        console.print(table)
    calls = Table("iter", "step", "model", "tokens", "latency", "outcome", title="model calls")
    for c in d.calls:
        tokens = f"{c.get('prompt_tokens', 0)}+{c.get('completion_tokens', 0)}"
        calls.add_row(
            str(c.get("iteration")),
            str(c.get("step")),
            str(c.get("model")),
            tokens,
            _num(c.get("latency")),
            str(c.get("outcome")),
        )
    console.print(calls)
    execs = Table("iter", "command", "exit", "secs", title="sandbox commands")
    for x in d.execs:
        exit_code = "timeout" if x["timed_out"] else str(x["exit_code"])
        execs.add_row(str(x["iteration"]), str(x["command"]), exit_code, _num(x["duration"]))
    console.print(execs)


def _installs(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Every distribution the run installed (its install events, its change set), each once."""
    rows: dict[tuple[str, str], dict[str, Any]] = {}
    for e in events:
        found = e.get("installed") if e.get("kind") == "environment_changed" else (
            (e.get("changes") or {}).get("installs") if e.get("kind") == "done" else None)
        for row in found or []:
            rows.setdefault((str(row.get("name")), str(row.get("version"))), row)
    return list(rows.values())


def _event_detail(e: dict[str, Any]) -> str:
    kind = e.get("kind")
    if kind == "tests_ran":
        return f"{e.get('passed')} passed, {e.get('failed')} failed, {e.get('errors')} errors"
    if kind == "plan":
        plan = e.get("plan") or {}
        return f"{len(plan.get('actions', []))} action(s): {str(plan.get('diagnosis', ''))[:80]}"
    if kind == "done":
        changes = e.get("changes") or {}
        made = f" [{changes['kind']}]" if changes.get("kind") else ""
        label = f" plausible: {changes.get('risk_reason', '')}" if changes.get("risk") == "plausible" else ""
        return f"{e.get('outcome')}: {e.get('summary', '')}"[:120] + made + label
    if kind in ("candidate_asked", "candidate_tested", "round_ended", "environment_changed"):  # seed, temperature, result or reason
        try:
            return describe(TypeAdapter(Event).validate_python(e))[:160]
        except ValidationError:
            pass
    for key in ("text", "path", "detail", "reason"):
        if key in e:
            return str(e[key]).replace("\n", " ")[:120]
    return f"iteration {e['iteration']}" if "iteration" in e else ""


def _print_json(value: Any) -> int:
    json.dump(value, sys.stdout, indent=2)
    sys.stdout.write("\n")
    return 0


def _when(ts: float) -> str:
    return datetime.datetime.fromtimestamp(ts).strftime("%m-%d %H:%M")


def _num(value: Any) -> str:
    return "-" if value is None else f"{float(value):.2f}"
