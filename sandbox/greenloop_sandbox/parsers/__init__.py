"""Test-report parsers: a runner's machine-readable output -> TestReport."""

from __future__ import annotations

from greenloop_sandbox.parsers.auto import parse_auto
from greenloop_sandbox.parsers.common import ParseInput
from greenloop_sandbox.parsers.junit import parse_junit
from greenloop_sandbox.parsers.libtest import parse_libtest
from greenloop_sandbox.parsers.tap import parse_tap
from greenloop_sandbox.report import TestReport

# "auto": a project's own test command (a report it writes, TAP or libtest output, else its exit code)
PARSERS = {"junit": parse_junit, "tap": parse_tap, "libtest": parse_libtest, "auto": parse_auto}


def parse_report(parser: str, data: ParseInput) -> TestReport:
    """Run the named parser; an unknown name is a template bug, reported as an error case."""
    try:
        fn = PARSERS[parser]
    except KeyError:
        raise ValueError(f"unknown report parser {parser!r}; known: {', '.join(PARSERS)}") from None
    report = fn(data)
    report.parser = report.parser or parser  # "auto" names the parser it chose
    return report


__all__ = ["PARSERS", "ParseInput", "parse_report"]
