"""The newest release of the test tool (pytest) that runs a project's tests, older majors in turn, bounded.

Asked when the diagnosis says the test tool refuses the project's test code, or that test code meets a
removed standard-library name (which test functions run is the tool's choice: pytest 8 runs nose-style
`setup` functions, pytest 9 does not). The releases come from the package index (pure-python wheels for
the sandbox's Python, pip_index.wheel_versions); the newest release, then the newest of each older major,
is installed in turn (a cached image layer, wheels only) and the failing tests run again. The first with which tests run and the tool no longer refuses them is kept;
the others' environments are put back. At most `MAX_TRIES` releases and `MAX_SECONDS` in all.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field

from packaging.version import Version

from greenloop.agent.environment.diagnosis import diagnose
from greenloop.agent.events import EnvironmentIssue
from greenloop.agent.ports import Refused, SandboxPort
from greenloop_sandbox.languages import Language
from greenloop_sandbox.pip_index import wheel_versions
from greenloop_sandbox.report import TestReport

MAX_TRIES = 5
MAX_SECONDS = 300.0


@dataclass
class ToolSearch:
    """What the search found: the release kept (None: none), the new report, and a line per release tried."""

    kept: Version | None = None
    report: TestReport | None = None
    tried: list[str] = field(default_factory=list)


def candidates(versions: list[Version], refused: Version | None) -> list[Version]:
    """The newest release, then the newest of each older major in turn, without the refused one (at most MAX_TRIES)."""
    newest: dict[int, Version] = {}
    for v in versions:
        if v != refused and (v.major not in newest or v > newest[v.major]):
            newest[v.major] = v
    return [newest[m] for m in sorted(newest, reverse=True)][:MAX_TRIES]


async def search(sandbox: SandboxPort, language: Language, python: str, refused: Version | None,
                 test_ids: list[str] | None, timeout: float, in_workspace: Callable[[str], bool]) -> ToolSearch:  # noqa: ASYNC109
    """Try older releases of the language's test tool until the tests run with one (see the module docstring)."""
    tool = language.test_tool
    found = ToolSearch()
    versions = await wheel_versions(tool, python)
    if not versions:
        found.tried.append(f"no release of {tool} could be listed from the package index")
        return found
    start = time.monotonic()
    before = await sandbox.environment()
    for version in candidates(versions, refused):
        if time.monotonic() - start > MAX_SECONDS:
            found.tried.append(f"stopped after {MAX_SECONDS:.0f}s")
            break
        installed = await sandbox.install([f"{tool}=={version}"])
        if isinstance(installed, Refused) or not installed.ok:
            why = installed.reason if isinstance(installed, Refused) else installed.stderr.strip()[-200:]
            found.tried.append(f"{tool} {version}: not installed ({why})")
            continue
        report = await sandbox.run_tests(test_ids, timeout=timeout)
        issue = diagnose(report, language, python, in_workspace)
        if report.cases and issue is None:
            found.kept, found.report = version, report
            found.tried.append(f"{tool} {version}: runs the tests ({report.summary()})")
            return found
        found.tried.append(f"{tool} {version}: {_why(issue, report)}")
        await sandbox.restore_environment(before)
    return found


def _why(issue: EnvironmentIssue | None, report: TestReport) -> str:
    if issue is not None and issue.message:
        return f"refused too ({issue.message[:160]})"
    said = report.failures[0].message.strip().splitlines()[0][:160] if report.failures else "no test ran"
    return f"no test ran ({said})"
