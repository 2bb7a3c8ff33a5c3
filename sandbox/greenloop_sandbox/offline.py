"""Tests that fail only because the sandbox has no network: told apart, and left out of a run on request.

Sandboxes run with network `none`, so a real project's tests that fetch a URL fail there even when
the code is right: youtube-dl's suite had 41 such failures next to its one real bug, and the loop
went after the downloader. A failure whose text is a name-resolution or unreachable-network error
needs the network; `leave_out` counts those tests as skipped in a report, so the loop neither
targets them nor waits for them to pass.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from greenloop_sandbox.report import TestFailure, TestReport

# name resolution and routing errors, as python (socket, urllib, requests/urllib3), node and rust say them
NETWORK = re.compile(
    r"Temporary failure in name resolution|Name or service not known|No address associated with hostname"
    r"|nodename nor servname provided|Network is unreachable|NameResolutionError|Failed to resolve"
    r"|getaddrinfo (?:failed|ENOTFOUND|EAI_AGAIN)|\bENOTFOUND\b|\bEAI_AGAIN\b|\bENETUNREACH\b"
    r"|failed to lookup address information|dns error"
)


def needs_network(failure: TestFailure) -> bool:
    """Whether the failure is the sandbox's missing network, by its message or traceback."""
    return NETWORK.search(f"{failure.message}\n{failure.traceback}") is not None


def leave_out(report: TestReport, test_ids: Iterable[str]) -> TestReport:
    """The report with the failures of `test_ids` counted as skipped (their cases too)."""
    ids = set(test_ids)
    gone = [f for f in report.failures if f.test_id in ids]
    if not gone:
        return report
    errors = sum(1 for f in gone if f.kind == "error")
    cases = [c.model_copy(update={"outcome": "skipped"}) if c.test_id in ids and c.outcome in ("failed", "error")
             else c for c in report.cases]
    return report.model_copy(update={
        "failures": [f for f in report.failures if f.test_id not in ids],
        "failed": max(0, report.failed - (len(gone) - errors)),
        "errors": max(0, report.errors - errors),
        "skipped": report.skipped + len(gone),
        "cases": cases,
    })
