"""Writes a bench's report files: report.md, report.json and pass_by_iteration.png in the output folder."""

from __future__ import annotations

import datetime
import json
from dataclasses import dataclass
from pathlib import Path

from greenloop.bench.plot import plot_pass_by_iteration
from greenloop.bench.report import ConfigSummary, report_json, report_markdown, summarize
from greenloop.bench.runner import BenchRun, report_meta
from greenloop.errors import GreenloopError

PLOT_FILE = "pass_by_iteration.png"


@dataclass
class ReportFiles:
    markdown: Path
    json: Path
    plot: Path | None
    summaries: list[ConfigSummary]


def write_reports(run: BenchRun) -> ReportFiles:
    """Summaries of every result so far (resumed ones included), as Markdown, JSON and a PNG."""
    out = run.options.out_dir
    out.mkdir(parents=True, exist_ok=True)
    meta = report_meta(run, datetime.datetime.now().astimezone().strftime("%Y-%m-%d %H:%M %Z"))
    summaries = summarize(run.results, [c.name for c in run.options.configs], int(meta["max_iterations"]))
    plot: Path | None = out / PLOT_FILE
    try:
        title = f"{run.suite.name}: tasks green by iteration ({meta['model']})"
        plot_pass_by_iteration(summaries, out / PLOT_FILE, title)
    except GreenloopError as exc:
        meta["notes"].append(f"no plot: {exc}")
        plot = None
    md = out / "report.md"
    md.write_text(report_markdown(meta, summaries, PLOT_FILE if plot else None), encoding="utf-8")
    js = out / "report.json"
    js.write_text(json.dumps(report_json(meta, summaries, run.results), indent=2) + "\n", encoding="utf-8")
    return ReportFiles(markdown=md, json=js, plot=plot, summaries=summaries)
