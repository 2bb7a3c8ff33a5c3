"""The newest release of the test tool (pytest) that runs a project's tests, older majors in turn, bounded.

`candidates` and `try_releases` are the search itself, shared with dependency_versions.py (a dependency
that no longer has a name the project uses).

Asked when the diagnosis says the test tool refuses the project's test code, or that test code meets a
removed standard-library name (which test functions run is the tool's choice: pytest 8 runs nose-style
`setup` functions, pytest 9 does not). The releases come from the package index (pure-python wheels for
the sandbox's Python, pip_index.wheel_versions); the newest release, then the newest of each major older than
the refused one (`tool_candidates`: a tool removes APIs in a major, it does not bring them back, so the other
releases of newer majors are skipped), is installed in turn (a cached image layer, wheels only) and the failing
tests run again. The first with which tests run and the tool no longer refuses them is kept; so is one that takes
the tests and stops before any runs on another problem the step remedies next (`elsewhere`: a dependency lacking
a name the code imports). The others' environments are put back. At most `MAX_TRIES` releases and `MAX_SECONDS`
in all.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field

from packaging.specifiers import SpecifierSet
from packaging.version import Version

from greenloop.agent.environment.diagnosis import diagnose, ran_a_test, said
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
    failed: list[Version] = field(default_factory=list)  # installed, and the problem was still there


def candidates(versions: list[Version], refused: Version | None, *, below: Version | None = None,
               allowed: SpecifierSet | None = None, limit: int = MAX_TRIES) -> list[Version]:
    """The newest release of each major, newest first, without the refused one (at most `limit`).

    `below` keeps only releases older than it; `allowed` only those the project's declared range or lock
    allows. When the releases left are all of one major, the newest of each minor instead."""
    pool = [v for v in versions if v != refused and (below is None or v < below)
            and (allowed is None or allowed.contains(v, prereleases=False))]
    newest: dict[tuple[int, ...], Version] = {}
    majors = {v.major for v in pool}
    for v in pool:
        key = (v.major,) if len(majors) > 1 else (v.major, v.minor)
        if key not in newest or v > newest[key]:
            newest[key] = v
    return [newest[k] for k in sorted(newest, reverse=True)][:limit]


def tool_candidates(versions: list[Version], refused: Version | None, limit: int = MAX_TRIES) -> list[Version]:
    """The newest release (a project written for a newer tool), then the newest of each major below the refused
    one, newest first (`Node.get_marker`, gone in pytest 4, needs pytest 3: the sixth major down from 9)."""
    if refused is None:
        return candidates(versions, refused, limit=limit)
    newest = [v for v in versions[:1] if v.major > refused.major]
    older = candidates(versions, refused, below=Version(str(refused.major)), limit=limit - len(newest))
    return newest + older


async def try_releases(sandbox: SandboxPort, dist: str, releases: list[Version], test_ids: list[str] | None,
                       timeout: float, still: Callable[[TestReport], str | None],  # noqa: ASYNC109
                       seconds: float = MAX_SECONDS, elsewhere: Callable[[TestReport], str | None] = lambda _: None
                       ) -> ToolSearch:
    """Install each release of `dist` in turn (wheels only, a cached image layer) and run the tests again; the
    first for which `still(report)` is None (the problem is gone) and a test ran is kept, the others'
    environments put back. A run that stops before any test on `elsewhere(report)` (another problem, which the
    step remedies next) keeps its release too."""
    found = ToolSearch()
    start = time.monotonic()
    before = await sandbox.environment()
    for version in releases:
        if time.monotonic() - start > seconds:
            found.tried.append(f"stopped after {seconds:.0f}s")
            break
        installed = await sandbox.install([f"{dist}=={version}"])
        if isinstance(installed, Refused) or not installed.ok:
            why = installed.reason if isinstance(installed, Refused) else installed.stderr.strip()[-200:]
            found.tried.append(f"{dist} {version}: not installed ({why})")
            continue
        report = await sandbox.run_tests(test_ids, timeout=timeout)
        problem = still(report)
        other = elsewhere(report) if problem is None and not ran_a_test(report) else None
        if problem is None and not ran_a_test(report) and other is None:
            problem = why_not(None, report)
        if problem is None:
            found.kept, found.report = version, report
            found.tried.append(f"{dist} {version}: the run then stops on {other} (remedied next)" if other else
                               f"{dist} {version}: runs the tests ({report.summary()})")
            return found
        found.tried.append(f"{dist} {version}: {problem}")
        found.failed.append(version)
        await sandbox.restore_environment(before)
    return found


async def search(sandbox: SandboxPort, language: Language, python: str, refused: Version | None,
                 test_ids: list[str] | None, timeout: float, in_workspace: Callable[[str], bool],  # noqa: ASYNC109
                 elsewhere: Callable[[TestReport], str | None] = lambda _: None) -> ToolSearch:
    """Try older releases of the language's test tool until the tests run with one (see the module docstring).
    `elsewhere(report)` names a problem of the run that is not the tool's (None: there is none)."""
    tool = language.test_tool
    versions = await wheel_versions(tool, python)
    if not versions:
        return ToolSearch(tried=[f"no release of {tool} could be listed from the package index"])

    def still(report: TestReport) -> str | None:
        issue = diagnose(report, language, python, in_workspace)
        return None if issue is None else why_not(issue, report)

    return await try_releases(sandbox, tool, tool_candidates(versions, refused), test_ids, timeout, still,
                              elsewhere=elsewhere)


def why_not(issue: EnvironmentIssue | None, report: TestReport) -> str:
    """Why a release tried did not do: its refusal, or the line the run stopped with."""
    if issue is not None and issue.message:
        return f"refused too ({issue.message[:160]})"
    stopped = said(report.failures[0])[:160] if report.failures else "no test ran"
    return f"no test ran ({stopped})"
