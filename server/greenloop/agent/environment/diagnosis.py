"""A test run's failures read as environment problems: a removed standard-library name, the test runner refusing the tests.

Such a failure is no bug in the code under test (the project's tests pass where it was written), so the
loop must not spend its rounds editing code for it. `diagnose` names the first one: its class, the
workspace file and line it happened at, the runner's own words and the fix a user can make. What counts
comes from the language record (`removed_apis`, `test_tool_error` in the template's `[language]` table).
A third-party module lacking a name (`dependency_suspects`) is only a suspect here: whether the installed
distribution really lacks it is asked in the sandbox (dependency_versions.py), which then builds the issue
with `dependency_api_issue`.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Callable, Collection

from packaging.version import InvalidVersion, Version

from greenloop.agent.events import EnvironmentIssue
from greenloop_sandbox.languages import Language
from greenloop_sandbox.packages import normal_name
from greenloop_sandbox.parsers.common import runner_message
from greenloop_sandbox.report import TestFailure, TestReport

_MODULE_ATTR = re.compile(r"module '(?P<mod>[\w.]+)' has no attribute '(?P<name>\w+)'")
_IMPORT_NAME = re.compile(r"cannot import name '(?P<name>\w+)' from '(?P<mod>[\w.]+)'")
_OBJECT_ATTR = re.compile(r"(?:type object '|')(?P<cls>[\w.]+)' (?:object )?has no attribute '(?P<name>\w+)'")
_FRAME = re.compile(r"^(?P<path>[^\s:][^:\n]*?\.py):(?P<line>\d+):", re.MULTILINE)


def diagnose(report: TestReport, language: Language | None, python: str,
             in_workspace: Callable[[str], bool]) -> EnvironmentIssue | None:
    """The first environment problem among the report's failures; None when they are the code's to fix.

    `python` is the sandbox's Python ("3.11"); `in_workspace` tells a workspace path from a library's."""
    if language is None:
        return None
    for failure in report.failures:
        text = f"{failure.message}\n{failure.traceback}"
        removed = _removed_api(text, language, python)
        if removed is not None:
            api, release = removed
            older = _before(release)
            file, line = _place(failure, in_workspace)
            return EnvironmentIssue(
                problem="removed_api", file=file, line=line, message=said(failure),
                fix=(f"`{api}` was removed in Python {release}, and the sandbox has Python {python}: this project "
                     f"needs Python {older} or older. Set project.image to an image with that Python and "
                     f"{language.test_tool or 'its test tools'} (for example one built FROM python:{older}-slim), "
                     "or port the call."))
        if language.test_tool_error and re.search(language.test_tool_error, text):
            file, line = _place(failure, in_workspace)
            return EnvironmentIssue(problem="test_tool", file=file, line=line, message=said(failure), fix="")
    return None


COLLECTION = "collection failure"  # pytest's JUnit message of a test module it could not import


def ran_a_test(report: TestReport) -> bool:
    """Whether any test ran: a case that is not a test module pytest could not collect (pytest writes each such
    module as an errored case)."""
    uncollected = {f.test_id for f in report.failures if f.message.startswith(COLLECTION)}
    return any(case.test_id not in uncollected for case in report.cases)


def dependency_suspects(text: str) -> list[tuple[str, str]]:
    """(module, name) pairs a failure's text says a module lacks, outside the standard library, in order."""
    pairs = [(m["mod"], m["name"]) for m in _MODULE_ATTR.finditer(text)]
    pairs += [(m["mod"], m["name"]) for m in _IMPORT_NAME.finditer(text)]
    return [p for p in dict.fromkeys(pairs) if p[0].partition(".")[0] not in sys.stdlib_module_names]


def dependency_api_issue(failure: TestFailure, in_workspace: Callable[[str], bool], api: str, dist: str,
                         version: str, where: str, lacking: tuple[str, ...] = ()) -> EnvironmentIssue:
    """The issue for `api` missing from `dist` `version` (installed) and the older `lacking` releases tried: the
    user's fix pins a release older than all of them in `where`."""
    file, line = _place(failure, in_workspace)
    try:
        oldest = min(Version(v) for v in (version, *lacking))
        bound = str(oldest.major) if oldest.major else f"0.{oldest.minor}"
    except InvalidVersion:
        bound = version
    nor = f" nor in {', '.join(lacking)}" if lacking else ""
    return EnvironmentIssue(
        problem="dependency_api", file=file, line=line, message=said(failure),
        fix=(f"`{api}` is not in {dist} {version} (installed){nor}; the project was written for an older {dist}: "
             f"pin `{dist}<{bound}` in {where}, or port the call to {dist} {version}."))


def no_wheel_issue(report: TestReport, language: Language, python: str, unavailable: Collection[str],
                   in_workspace: Callable[[str], bool]) -> EnvironmentIssue | None:
    """A test failing on a missing module of a package the environment step could not install because no release
    of it has a wheel for `python` (`unavailable`: normal names); None when no failure is that."""
    if not language.missing_module or not unavailable:
        return None
    for failure in report.failures:
        found = re.search(language.missing_module, f"{failure.message}\n{failure.traceback}")
        name = normal_name(found[1].partition(".")[0]) if found else ""
        if name in unavailable:
            file, line = _place(failure, in_workspace)
            return EnvironmentIssue(
                problem="no_wheel", file=file, line=line, message=said(failure),
                fix=(f"{name} has no wheel for Python {python} in any release, and the sandbox cannot build it from "
                     "source (it has no compiler). Set project.image to an image with an older Python the project "
                     f"supports and {language.test_tool or 'its test tools'} (for example one built FROM "
                     "python:3.8-slim), or move the project to a release of it published for this Python."))
    return None


def _removed_api(text: str, language: Language, python: str) -> tuple[str, str] | None:
    """(the removed name, the release that removed it) when `text` fails on one this Python lacks."""
    names = [f"{m['mod']}.{m['name']}" for m in _MODULE_ATTR.finditer(text)]
    names += [f"{m['mod']}.{m['name']}" for m in _IMPORT_NAME.finditer(text)]
    for name in names:
        if (release := language.removed_apis.get(name)) and _at_most(release, python):
            return name, release
    for m in _OBJECT_ATTR.finditer(text):  # a method of a class: 'Thread' object has no attribute 'isAlive'
        tail = f".{m['cls'].rsplit('.', 1)[-1]}.{m['name']}"
        for api, release in language.removed_apis.items():
            if api.endswith(tail) and _at_most(release, python):
                return api, release
    return None


def _at_most(release: str, python: str) -> bool:
    try:
        return Version(release) <= Version(python)
    except InvalidVersion:
        return False


def _before(release: str) -> str:
    """The last release that still had a name `release` removed: 3.11 -> 3.10, 3.0 -> 2.7."""
    major, _, minor = release.partition(".")
    return f"{major}.{int(minor) - 1}" if minor.isdigit() and int(minor) > 0 else f"{int(major) - 1}.7"


def _place(failure: TestFailure, in_workspace: Callable[[str], bool]) -> tuple[str | None, int | None]:
    """The deepest workspace frame of the failure's traceback (where the project's code met the problem)."""
    frames = [(m["path"], int(m["line"])) for m in _FRAME.finditer(failure.traceback)]
    inside = [(path.removeprefix("/workspace/"), line) for path, line in frames
              if in_workspace(path.removeprefix("/workspace/"))]
    if inside:
        return inside[-1]
    return failure.file, failure.line


def said(failure: TestFailure) -> str:
    """What the runner said of the failure: its own error line, else the message's first line."""
    return runner_message(failure.traceback) or (failure.message.strip().splitlines() or [""])[0]
