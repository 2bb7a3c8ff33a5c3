"""The environment step, before round 1 and never a round: the project's versions installed, its own code made
importable, and a first run's environment problems remedied or said.

`prepare` installs the first version source that installs (sources.py; a failed one is a line and the
next is tried) and puts the project's import roots (a `src/` layout, `[tool.pytest.ini_options]
pythonpath`) on the sandbox's path. `settle` reads the first test run: a package the step installed that
stopped it before any test ran is left out (broken_installs.py); then (diagnosis.py) the test tool
refusing the tests gets an older release (tool_versions.py), and so does a dependency that no longer has a
name the project uses (dependency_versions.py); the run a remedy leaves is read again, since it can show the
next problem (at most MAX_REMEDIES remedies, none twice); a problem no remedy removes ends the run
with outcome "environment" (exit code 3) before any candidate is made or model asked. The user's
files are never touched; only the sandbox's image changes.
"""

from __future__ import annotations

import json
import re
import time
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from fnmatch import fnmatch

from packaging.requirements import InvalidRequirement, Requirement
from packaging.version import InvalidVersion, Version

from greenloop.agent.changes.declared import declared_packages
from greenloop.agent.changes.working_copy import WorkingCopy
from greenloop.agent.environment import (
    broken_installs,
    dependency_versions,
    installs,
    test_config,
    tool_requires,
    tool_versions,
)
from greenloop.agent.environment.diagnosis import diagnose, no_wheel_issue
from greenloop.agent.environment.sources import DECLARED, version_sources
from greenloop.agent.environment.wheels import declared_ranges
from greenloop.agent.events import EnvironmentIssue, EnvironmentReady
from greenloop.agent.ports import Refused, SandboxPort
from greenloop_sandbox.languages import Language
from greenloop_sandbox.packages import normal_name, package_name
from greenloop_sandbox.pip_resolve import PYTHON
from greenloop_sandbox.report import TestReport

_IMAGE_TOOLS = {"pip", "setuptools", "wheel", "python"}  # the image's own tooling: never installed over
PTH = "greenloop-project.pth"
MAX_REMEDIES = 3  # remedies chained on one first run, each on the report the one before it left


@dataclass
class EnvironmentStep:
    """One run's environment step; `event()` is what it did, as the run's `EnvironmentReady`."""

    sandbox: SandboxPort
    copy: WorkingCopy
    interpreter: Mapping[str, str] | None = None
    python: str = PYTHON
    lines: list[str] = field(default_factory=list)
    source: str = ""
    packages: list[str] = field(default_factory=list)
    tool: str = ""
    wanted: list[str] = field(default_factory=list)  # every spec of the source used, installed or already there
    unavailable: list[str] = field(default_factory=list)  # normal names with no wheel for this Python (wheels.py)
    started: float = field(default_factory=time.monotonic)

    async def prepare(self) -> None:
        """Install the project's versions and put its import roots on the path (see the module docstring)."""
        installed = await self._installed()
        language = self.sandbox.language
        own = {normal_name(n) for n in _own_names(self.copy)}
        installer = installs.Installer(self.sandbox, self.python, declared_ranges(declared_packages(self.copy)),
                                       self.lines, self.unavailable)
        tool = language.test_tool if language is not None else ""
        required: tuple[str, dict[str, Requirement]] | None = None  # the sandbox's tool's, read when first needed
        for pins in version_sources(self.copy, self.python, self.interpreter):
            if not pins.specs:
                self.lines.append(f"{pins.source}: not used, {pins.reason}")
                continue
            wanted = [s for s in pins.specs if package_name(s) not in own | _IMAGE_TOOLS
                      and not _satisfied(s, installed)]
            if wanted and not any(package_name(s) == normal_name(tool) for s in pins.specs):  # the sandbox's tool stays
                required = required or await self._tool_requires(tool)
                wanted = self._within_tool(wanted, pins.source, tool, *required)
            specs = await installer.install_source(pins.source, wanted, pins.source == DECLARED) if wanted else []
            if specs is None:
                continue
            self.source, self.packages, self.wanted = pins.source, specs, list(pins.specs)
            kept = {package_name(s) for s in specs}
            gone = [s for s in wanted if package_name(s) not in kept]
            self.lines.append(f"{pins.source}: {len(pins.specs)} package(s), {len(specs)} installed"
                              + (f"; not installed: {', '.join(gone)}" if gone else ""))
            break
        own_tool = next((s for s in self.packages if tool and package_name(s) == normal_name(tool)), "")
        if "==" in own_tool:
            self.tool = f"{tool} {own_tool.split('==', 1)[1]} (the project pins it)"
        elif own_tool and (now := (await self._installed()).get(normal_name(tool))):
            self.tool = f"{tool} {now} (the project's range: {own_tool})"
        elif tool and (have := installed.get(normal_name(tool))):
            self.tool = f"{tool} {have} (the sandbox's)"
        await self._import_roots()

    async def settle(self, report: TestReport, test_ids: list[str] | None, timeout: float) -> tuple[TestReport, EnvironmentIssue | None]:  # noqa: ASYNC109
        """The first run's report after the remedies, and the problem none of them removed (None: the loop may go on).

        A remedy's run can show the next problem (an older dependency, then a test id only a newer pytest
        takes), so the report each remedy leaves is settled again: at most MAX_REMEDIES remedies, none twice."""
        language = self.sandbox.language
        if language is None:
            return report, None
        applied: list[str] = []
        while True:
            report = await self._without_broken_installs(report, test_ids, timeout)
            report, issue, remedy = await self._remedy(language, report, test_ids, timeout, applied)
            if issue is not None or remedy is None:
                return report, issue
            applied.append(remedy)
            if len(applied) == MAX_REMEDIES:
                return report, None

    async def _remedy(self, language: Language, report: TestReport, test_ids: list[str] | None, timeout: float,  # noqa: ASYNC109
                      applied: list[str]) -> tuple[TestReport, EnvironmentIssue | None, str | None]:
        """One problem of `report` remedied: the report after it, the problem left (or None), and which remedy ran
        (None: none was needed, or the one needed ran already, so the report is taken as it is)."""
        issue = diagnose(report, language, self.python, self._in_workspace)
        if issue is None and (refusal := test_config.read(report, language, self.copy)) is not None:
            if "plugins" in applied:
                return report, None, None
            return (*await self._configured_plugins(language, refusal, report, test_ids, timeout), "plugins")
        if issue is None and (stop := no_wheel_issue(report, language, self.python, self.unavailable,
                                                     self._in_workspace)) is not None:
            return report, stop, None
        if issue is None:
            moved = await dependency_versions.find(self.sandbox, report, self.copy)
            if moved is None or f"older {moved.dist}" in applied:
                return report, None, None
            return (*await self._older_dependency(moved, report, test_ids, timeout), f"older {moved.dist}")
        # test code the runner chose to run (tests ran): another release may not run it; code every release
        # imports (a conftest, a test module's top level: no test ran) fails in all of them
        in_tests = issue.file is not None and any(fnmatch(issue.file, g) for g in language.test_globs) \
            and bool(report.cases)
        if language.test_tool and (issue.problem == "test_tool" or in_tests):
            if "test tool" in applied:  # a release was chosen that runs the tests: what it stops on now is the rounds'
                return report, None, None
            refused = self._tool_version()
            said = "refuses the tests" if issue.problem == "test_tool" else "runs test code that fails here"
            self.lines.append(f"{language.test_tool} {refused or ''} {said}: {issue.message}".replace("  ", " "))
            found = await tool_versions.search(self.sandbox, language, self.python, refused, test_ids, timeout,
                                               self._in_workspace, self._lacking)
            self.lines.extend(found.tried)
            if found.kept is not None and found.report is not None:
                self.tool = f"{language.test_tool} {found.kept} (the newest that runs the tests)"
                if "cannot rewrite asserts" in found.report.raw:  # the python runner's note (run_pytest.py)
                    self.lines.append(f"{language.test_tool} {found.kept} runs with plain asserts: its assertion "
                                      f"rewriting does not compile on Python {self.python}, so a failed assert "
                                      "shows no values")
                self.lines.append(f"pin {language.test_tool}=={found.kept} in the project's test requirements so "
                                  "every environment runs this one")
                if test_ids is None:
                    return found.report, None, "test tool"
                return await self.sandbox.run_tests(test_ids, timeout=timeout), None, "test tool"
            if issue.problem == "test_tool":
                issue.fix = (f"Pin the {language.test_tool} the project was written for in its test requirements (for "
                             f"example `{language.test_tool}<{refused.major if refused else 'N'}` in requirements-dev.txt); "
                             f"none of the {len(found.tried)} release(s) tried runs its tests on Python {self.python}, "
                             "so it may need an older Python too: set project.image.")
        return report, issue, None

    async def _without_broken_installs(self, report: TestReport, test_ids: list[str] | None,
                                       timeout: float) -> TestReport:  # noqa: ASYNC109
        """The run again without each package this step installed that stopped it before any test ran
        (broken_installs.py); the report as it is when there is none."""
        language = self.sandbox.language
        tool = (language.test_tool if language is not None else "") or "the test tool"
        for _ in range(broken_installs.MAX_REMOVED):
            spec, module = "", ""
            for module in broken_installs.stopping_modules(report):  # deepest first: the first the step installed
                owners = await self.sandbox.run_command(["python3", "-c", broken_installs.OWNERS, module], seconds=60)
                if spec := broken_installs.installed_owner(owners or "", self.packages):
                    break
            name = package_name(spec) if spec else ""
            if not re.fullmatch(r"[a-z0-9][a-z0-9._-]*", name):
                break
            stopped = broken_installs.said(report)
            mark = await self.sandbox.environment()
            result = await self.sandbox.run_setup(f"python3 -m pip uninstall -y --break-system-packages --disable-pip-version-check {name}")
            if isinstance(result, Refused) or not result.ok:
                why = result.reason if isinstance(result, Refused) else installs.tail(result.stderr + result.stdout)
                self.lines.append(f"{spec} stops {tool} before any test ran ({stopped}) and could not be left out "
                                  f"({why})")
                break
            without = await self.sandbox.run_tests(test_ids, timeout=timeout)
            if broken_installs.now_missing(without, module):
                await self.sandbox.restore_environment(mark)
                self.lines.append(f"{spec} stops {tool} before any test ran ({stopped}), and the project's code "
                                  f"imports `{module}`: kept, since leaving it out only makes it missing")
                break
            self.packages.remove(spec)
            where = test_config.declaring_file(self.copy, name)
            self.lines.append(f"{spec} left out: {tool} stopped in it before any test ran ({stopped}); "
                              + (f"the project declares it in {where}: take it out there" if where else
                                 "take it out of the project's requirements") + " if its tests no longer need it")
            report = without
        return report

    async def _older_dependency(self, moved: dependency_versions.Moved, report: TestReport, test_ids: list[str] | None,
                                timeout: float) -> tuple[TestReport, EnvironmentIssue | None]:  # noqa: ASYNC109
        """An older release of the distribution that lacks the name, within what the project allows; else the issue."""
        where = dependency_versions.declaring_file(self.copy, moved.dist)
        issue = moved.issue(self._in_workspace, where)
        self.lines.append(f"{moved.dist} {moved.version} has no `{moved.api}`: {issue.message}")
        allowed = dependency_versions.allowed_range(moved.dist, [*self.wanted, *declared_packages(self.copy)])
        found = await dependency_versions.remedy(self.sandbox, moved, self.python, allowed, test_ids, timeout,
                                                 self._tool_refusal)
        self.lines.extend(found.tried)
        if found.kept is None or found.report is None:
            issue = moved.issue(self._in_workspace, where, tuple(str(v) for v in found.failed))
            if str(allowed):
                issue.fix += f" Releases outside the project's own range ({moved.dist}{allowed}) were not tried."
            return report, issue
        self.lines.append(f"{moved.dist} {found.kept} kept: the newest older release tried that has `{moved.api}` "
                          f"({moved.version} does not); pin `{moved.dist}=={found.kept}` in {where} so every "
                          "environment gets it")
        if test_ids is None:
            return found.report, None
        return await self.sandbox.run_tests(test_ids, timeout=timeout), None

    async def _configured_plugins(self, language: Language, refusal: test_config.OptionsRefused, report: TestReport,
                                  test_ids: list[str] | None,
                                  timeout: float) -> tuple[TestReport, EnvironmentIssue | None]:  # noqa: ASYNC109
        """The plugins whose options the project's configuration passes, installed when the project declares them
        and the tests run again; else the issue naming what to declare (test_config.py)."""
        where, tool = refusal.file or "the project's pytest configuration", language.test_tool or "the test tool"
        named = test_config.plugins(refusal.options, language)
        options, plugins = " ".join(refusal.options), sorted(set(named.values()))
        self.lines.append(f"{tool} refuses the options {options} that {where} passes: {refusal.message}")
        declared = {p: test_config.declaring_file(self.copy, p) for p in plugins}
        unknown = [o for o in refusal.options if o not in named]
        if plugins and not unknown and all(declared.values()):
            specs = [test_config.spec_in(self.copy, declared[p], p) for p in plugins]
            result = await self.sandbox.install(specs)
            if isinstance(result, Refused) or not result.ok:
                why = result.reason if isinstance(result, Refused) else installs.tail(result.stderr + result.stdout)
                self.lines.append(f"{', '.join(specs)} (declared in {', '.join(sorted(set(declared.values())))}): "
                                  f"not installed ({why})")
            else:
                self.packages.extend(specs)
                self.lines.append(f"{', '.join(specs)} installed: the project declares it "
                                  f"({', '.join(sorted(set(declared.values())))}) and {where} passes its options")
                again = await self.sandbox.run_tests(test_ids, timeout=timeout)
                if test_config.read(again, language, self.copy) is None:
                    return again, None
                self.lines.append(f"{tool} still refuses the options with {', '.join(specs)}")
        if unknown:
            fix = (f"{where} passes {' '.join(unknown)}, which {tool} does not know here: the plugin that gives it is "
                   "not installed. Declare that plugin with the project's test requirements (for example in "
                   "requirements-dev.txt), or take the option out of the configuration.")
        elif not all(declared.values()):
            missing = [p for p in plugins if not declared[p]]
            fix = (f"{where} passes {options}, options of {', '.join(missing)}, which the project does not declare: "
                   f"add {', '.join(missing)} to its test requirements (for example requirements-dev.txt) and the "
                   "environment step installs it.")
        else:
            fix = (f"{where} passes {options}, options of {', '.join(plugins)}, which the project declares but which "
                   "did not install or take them here; see the environment lines.")
        return report, refusal.issue(fix)

    def event(self, issue: EnvironmentIssue | None = None) -> EnvironmentReady:
        what = f"{len(self.packages)} package(s) from {self.source}" if self.source else "no packages of the project's"
        summary = "environment: " + "; ".join(p for p in (what, self.tool) if p)
        if issue is not None:
            where = f"{issue.file}:{issue.line}" if issue.file and issue.line else (issue.file or "the test run")
            summary += f"; the tests cannot run here ({issue.problem.replace('_', ' ')} at {where}: {issue.message})"
        return EnvironmentReady(summary=summary, lines=list(self.lines), source=self.source, packages=self.packages,
                                test_tool=self.tool, seconds=round(time.monotonic() - self.started, 3), problem=issue)

    def _tool_version(self) -> Version | None:
        try:
            return Version(self.tool.split()[1]) if len(self.tool.split()) > 1 else None
        except InvalidVersion:
            return None

    async def _tool_requires(self, tool: str) -> tuple[str, dict[str, Requirement]]:
        """The sandbox's test tool's version and requirements on this Python (tool_requires.py)."""
        if not tool:
            return "", {}
        output = await self.sandbox.run_command(["python3", "-c", tool_requires.REQUIRES, tool], seconds=60)
        return tool_requires.read(output or "", self.python)

    def _within_tool(self, wanted: list[str], source: str, tool: str, version: str,
                     requires: dict[str, Requirement]) -> list[str]:
        """`wanted` without the pins outside the sandbox's test tool's requirements, each said in a line."""
        kept: list[str] = []
        for spec in wanted:
            if (needed := tool_requires.outside(spec, requires)) is None:
                kept.append(spec)
                continue
            self.lines.append(f"{spec} ({source}) not installed: {f'{tool} {version}'.strip()} (the sandbox's) needs "
                              f"{needed}, and the image's copy stays; pin {tool} in the project's test requirements to "
                              "use the versions of its day")
        return kept

    def _tool_refusal(self, report: TestReport) -> str | None:
        """The test tool refusing the tests (diagnosis.py; the tool search settles it), as words; None: it does not."""
        issue = diagnose(report, self.sandbox.language, self.python, self._in_workspace)
        return f"the test tool refusing the tests ({issue.message[:120]})" if issue and issue.problem == "test_tool" \
            else None

    def _lacking(self, report: TestReport) -> str | None:
        """A dependency the run says lacks a name (dependency_versions.py settles it), as words; None: none."""
        tool = self.sandbox.language.test_tool if self.sandbox.language is not None else ""
        return dependency_versions.lacking(report, self.copy.paths(), normal_name(tool).replace("-", "_"))

    def _in_workspace(self, path: str) -> bool:
        return self.copy.read(path) is not None

    async def _installed(self) -> dict[str, str]:
        """The sandbox's installed distributions (normal name -> version); {} when pip cannot list them."""
        listing = await self.sandbox.run_command(
            ["python3", "-m", "pip", "list", "--format", "json", "--disable-pip-version-check"], seconds=60)
        try:
            rows = json.loads((listing or "").strip().splitlines()[0]) if listing else []
        except (ValueError, IndexError):
            return {}
        return {normal_name(str(r.get("name", ""))): str(r.get("version", "")) for r in rows if isinstance(r, dict)}

    async def _import_roots(self) -> None:
        """The project's import roots beyond the workspace root on the sandbox's path (a .pth file in an image layer:
        no build backend runs), so a `src/` layout imports its own package whatever the test tool's version."""
        roots = _import_roots(self.copy)
        if not roots or self.sandbox.backend != "docker":
            return
        text = "\\n".join(f"/workspace/{r}" for r in roots)
        command = (f"python3 -c \"import site, pathlib; pathlib.Path(site.getsitepackages()[0], '{PTH}')"
                   f".write_text('{text}\\\\n')\"")
        result = await self.sandbox.run_setup(command)
        ok = not isinstance(result, Refused) and result.ok
        self.lines.append(f"the project's import roots on the path: {', '.join(roots)}" if ok else
                          f"the project's import roots ({', '.join(roots)}) could not be put on the path")


def _import_roots(copy: WorkingCopy) -> list[str]:
    """`src` when the project keeps a package there, and `[tool.pytest.ini_options] pythonpath` entries."""
    roots: list[str] = []
    paths = copy.paths()
    if any(p.startswith("src/") and p.count("/") == 2 and p.endswith("/__init__.py") for p in paths):
        roots.append("src")
    try:
        data = tomllib.loads(copy.read("pyproject.toml") or "")
    except tomllib.TOMLDecodeError:
        data = {}
    extra = data.get("tool", {}).get("pytest", {}).get("ini_options", {}).get("pythonpath", [])
    for entry in [extra] if isinstance(extra, str) else extra if isinstance(extra, list) else []:
        entry = str(entry).strip().strip("/")
        if entry and entry != "." and ".." not in entry and "'" not in entry and entry not in roots:
            roots.append(entry)
    return roots


def _own_names(copy: WorkingCopy) -> set[str]:
    names: set[str] = set()
    try:
        data = tomllib.loads(copy.read("pyproject.toml") or "")
        if name := data.get("project", {}).get("name"):
            names.add(str(name))
        if name := data.get("tool", {}).get("poetry", {}).get("name"):
            names.add(str(name))
    except tomllib.TOMLDecodeError:
        pass
    return names


def _satisfied(spec: str, installed: Mapping[str, str]) -> bool:
    have = installed.get(package_name(spec))
    if not have:
        return False
    try:
        return Requirement(spec).specifier.contains(have, prereleases=True)
    except InvalidRequirement:
        return False

