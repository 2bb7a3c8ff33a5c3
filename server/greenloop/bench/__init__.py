"""Benchmarks: suites x step configs x repeats -> results, a Markdown/JSON report and a plot."""

from greenloop.bench.configs import DEFAULT_CONFIG, StepConfig, apply_config, load_config, load_configs
from greenloop.bench.report import ConfigSummary, summarize, wilson_interval
from greenloop.bench.report_files import ReportFiles, write_reports
from greenloop.bench.runner import BenchOptions, BenchRun, run_bench
from greenloop.bench.state import BenchState, CellResult
from greenloop.bench.suites import SUITES, Suite, Task, load_suite

__all__ = [
    "DEFAULT_CONFIG",
    "SUITES",
    "BenchOptions",
    "BenchRun",
    "BenchState",
    "CellResult",
    "ConfigSummary",
    "ReportFiles",
    "StepConfig",
    "Suite",
    "Task",
    "apply_config",
    "load_config",
    "load_configs",
    "load_suite",
    "run_bench",
    "summarize",
    "wilson_interval",
    "write_reports",
]
