"""A dependency's API that its installed release no longer has: asked in the sandbox, then older releases tried, bounded.

An older or pinned project meets a dependency that moved on (`cannot import name 'url_quote' from
'werkzeug.urls'`, `module 'dep' has no attribute 'X'`). That is no bug of the code under test. `find` takes
the failures' (module, name) suspects outside the standard library and the workspace (a workspace module
lacking a name is the missing-name rung's) and asks the sandbox, where the module is imported and
`importlib.metadata.packages_distributions()` names its distribution, whether the installed release really
lacks the name. `remedy` then tries the newest release of each older major of that distribution (each
older minor when there is one major), only those the project's lock, pins and declared range allow, at
most `MAX_TRIES` in `MAX_SECONDS` (tool_versions.try_releases: wheels fetched on the host, installed in the
sandbox). Nothing of the workspace runs on the host.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import PurePosixPath

from packaging.requirements import InvalidRequirement, Requirement
from packaging.specifiers import SpecifierSet
from packaging.version import InvalidVersion, Version

from greenloop.agent.changes.working_copy import WorkingCopy
from greenloop.agent.environment.diagnosis import dependency_api_issue, dependency_suspects
from greenloop.agent.environment.tool_versions import ToolSearch, candidates, try_releases
from greenloop.agent.events import EnvironmentIssue
from greenloop.agent.ports import SandboxPort
from greenloop_sandbox.packages import normal_name
from greenloop_sandbox.pip_index import wheel_versions
from greenloop_sandbox.report import TestFailure, TestReport

MAX_TRIES = 3
MAX_SECONDS = 180.0
MAX_PROBES = 3  # distinct (module, name) suspects asked in the sandbox per run

# run in the sandbox, the workspace taken off the path: the module's distribution and whether it has the name
PROBE = """
import importlib, importlib.metadata as md, importlib.util, json, os, sys
sys.path[:] = [p for p in sys.path if p not in ("", ".", os.getcwd())]
mod, name = sys.argv[1], sys.argv[2]
out = {"dists": md.packages_distributions().get(mod.partition(".")[0], [])}
try:
    m = importlib.import_module(mod)
    out["file"] = getattr(m, "__file__", None) or ""
    out["has"] = hasattr(m, name) or (hasattr(m, "__path__") and importlib.util.find_spec(mod + "." + name) is not None)
except Exception as exc:
    out["error"] = repr(exc)[:200]
if out["dists"]:
    out["version"] = md.version(out["dists"][0])
print(json.dumps(out))
"""


@dataclass(frozen=True)
class Moved:
    """A failure on `module.name`, which `dist` `version` (installed in the sandbox) does not have."""

    failure: TestFailure
    module: str
    name: str
    dist: str
    version: str

    @property
    def api(self) -> str:
        return f"{self.module}.{self.name}"

    def issue(self, in_workspace: Callable[[str], bool], where: str,
              lacking: tuple[str, ...] = ()) -> EnvironmentIssue:
        return dependency_api_issue(self.failure, in_workspace, self.api, self.dist, self.version, where, lacking)


async def find(sandbox: SandboxPort, report: TestReport, copy: WorkingCopy) -> Moved | None:
    """The first failure on a name an installed third-party distribution lacks; None when there is none."""
    asked: set[tuple[str, str]] = set()
    for failure in report.failures:
        for module, name in dependency_suspects(f"{failure.message}\n{failure.traceback}"):
            if (module, name) in asked or is_workspace_module(module, copy.paths()):
                continue
            if len(asked) >= MAX_PROBES:
                return None
            asked.add((module, name))
            said = await sandbox.run_command(["python3", "-c", PROBE, module, name], seconds=60)
            found = read_probe(said)
            if found is not None:
                return Moved(failure, module, name, *found)
    return None


def read_probe(said: str | None) -> tuple[str, str] | None:
    """(distribution, installed version) when the probe's output says an installed distribution's module lacks the name."""
    lines = [line for line in (said or "").splitlines() if line.startswith("{")]
    try:
        out = json.loads(lines[-1]) if lines else {}
    except ValueError:
        return None
    dists, version = out.get("dists") or [], str(out.get("version") or "")
    if not dists or not version or out.get("has") is not False or str(out.get("file", "")).startswith("/workspace/"):
        return None
    return str(dists[0]), version


def lacking(report: TestReport, paths: Iterable[str], tool: str) -> str | None:
    """The first third-party module the run's failures say lacks a name, as "`module` lacking `name`" (None: none).
    The test tool's own modules (`pytest`, `_pytest`) are not counted: a name they lack is the tool's problem."""
    own = {tool, f"_{tool}"}
    paths = list(paths)
    for failure in report.failures:
        for module, name in dependency_suspects(f"{failure.message}\n{failure.traceback}"):
            if module.partition(".")[0] not in own and not is_workspace_module(module, paths):
                return f"`{module}` lacking `{name}`"
    return None


def is_workspace_module(module: str, paths: Iterable[str]) -> bool:
    """Whether the workspace has a file or folder of the module's top-level name (at any depth: an import root)."""
    top = module.partition(".")[0]
    for path in paths:
        parts = PurePosixPath(path).parts
        if "site-packages" in parts or any(p.startswith(".") for p in parts):
            continue  # a virtual environment kept in the workspace holds installed distributions, not the project's
        if top in parts[:-1] or (path.endswith(".py") and PurePosixPath(path).stem == top):
            return True
    return False


def allowed_range(dist: str, specs: Iterable[str]) -> SpecifierSet:
    """What the project's own specs (its lock or pins as installed, its declared ranges) allow of `dist`."""
    allowed = SpecifierSet()
    for spec in specs:
        try:
            req = Requirement(spec)
        except InvalidRequirement:
            continue
        if normal_name(req.name) == normal_name(dist):
            allowed &= req.specifier
    return allowed


async def remedy(sandbox: SandboxPort, moved: Moved, python: str, allowed: SpecifierSet,
                 test_ids: list[str] | None, timeout: float,  # noqa: ASYNC109
                 elsewhere: Callable[[TestReport], str | None] = lambda _: None) -> ToolSearch:
    """Older releases of the distribution in turn until the failing tests no longer fail on the name (see the docstring).
    A release whose run stops before any test on another problem, `elsewhere(report)` (the test tool refusing
    the tests), is kept for the step's next remedy."""
    try:
        installed: Version | None = Version(moved.version)
    except InvalidVersion:
        installed = None
    versions = await wheel_versions(moved.dist, python)
    if not versions:
        return ToolSearch(tried=[f"no release of {moved.dist} with a pure-python wheel could be listed from the "
                                 "package index"])
    releases = candidates(versions, installed, below=installed, allowed=allowed, limit=MAX_TRIES)
    if not releases:
        why = f" the project allows ({allowed})" if str(allowed) else ""
        return ToolSearch(tried=[f"no older release of {moved.dist}{why} to try"])

    def still(report: TestReport) -> str | None:
        for failure in report.failures:
            if (moved.module, moved.name) in dependency_suspects(f"{failure.message}\n{failure.traceback}"):
                return f"still lacks `{moved.api}`"
        return None

    return await try_releases(sandbox, moved.dist, releases, test_ids, timeout, still, MAX_SECONDS, elsewhere)


def declaring_file(copy: WorkingCopy, dist: str) -> str:
    """The project file that names `dist` (where its pin belongs); requirements.txt when none does."""
    wanted = normal_name(dist).replace("_", "-")  # as the text is read: `_` and `.` written `-`
    for path in sorted(copy.paths()):
        name = PurePosixPath(path).name
        if (name.endswith(".txt") and "requirements" in name) or name in ("pyproject.toml", "setup.cfg", "setup.py"):
            text = (copy.read(path) or "").lower().replace("_", "-").replace(".", "-")
            if wanted in text:
                return path
    return "requirements.txt"
