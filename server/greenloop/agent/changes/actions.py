"""The one place that applies a DebugPlan: file actions to the working copy, the rest to the sandbox."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import PurePosixPath

from greenloop.agent.changes.declared import declared_packages
from greenloop.agent.changes.edits import EditMiss, apply_search_replace
from greenloop.agent.changes.paths import UnsafePath, safe_relpath
from greenloop.agent.changes.syntax import introduced_error
from greenloop.agent.changes.testfiles import TestFiles
from greenloop.agent.changes.working_copy import WorkingCopy
from greenloop.agent.events import (
    EditApplied,
    EditRejected,
    EnvironmentChanged,
    Event,
    InstalledPackage,
    Message,
)
from greenloop.agent.install_gate import Origin
from greenloop.agent.plan import Action, DebugPlan, EditAction, InstallAction, RunAction, WriteAction
from greenloop.agent.ports import Refused, SandboxPort
from greenloop_sandbox import ExecResult, TestFailure
from greenloop_sandbox.base import InstallResult
from greenloop_sandbox.packages import normal_name, package_name, without

_HEADING = re.compile(r"^(.+?):\d+(-\d+)?(\W.*)?$")  # `calc.py:3-9 add (function)`, `calc.py:4: 'assert ...'`


@dataclass
class ApplyOutcome:
    events: list[Event] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)  # rejected actions, said so the model can repair them
    applied: int = 0
    packages: list[str] = field(default_factory=list)
    installs: list[InstalledPackage] = field(default_factory=list)  # what `packages` put in, with origins
    commands: list[str] = field(default_factory=list)
    env_failed: bool = False


async def apply_plan(
    plan: DebugPlan,
    copy: WorkingCopy,
    sandbox: SandboxPort,
    iteration: int,
    failures: list[TestFailure] | None = None,
    tests: TestFiles | None = None,
    module: str = "",
) -> ApplyOutcome:
    """Apply every action in order; rejected ones are reported, never half-applied.

    `failures` (the report the plan answers) lets a search miss say that its text came from the report.
    `tests` says which files are tests; an edit or write to one is refused unless they are writable.
    `module` is the missing module an install is for: a package that does not provide it is said.
    """
    out = ApplyOutcome()
    aliases = tuple(d for d in (sandbox.workspace_dir(),) if d)
    for action in plan.actions:
        if isinstance(action, EditAction | WriteAction):
            _apply_file_action(action, copy, iteration, out, failures or [], aliases, tests)
        elif isinstance(action, InstallAction):
            await _apply_install(action, sandbox, iteration, out, copy, module)
        else:
            await _apply_env_action(action, sandbox, iteration, out, _own_names(copy))
    return out


def _apply_file_action(
    action: EditAction | WriteAction, copy: WorkingCopy, iteration: int, out: ApplyOutcome,
    failures: list[TestFailure], aliases: tuple[str, ...], tests: TestFiles | None = None,
) -> None:
    try:
        path = safe_relpath(copy.root, action.path, aliases)
    except UnsafePath as exc:
        _reject(out, iteration, action.path, f"refused: {exc}")
        return
    shown = _heading_path(copy, path)
    if shown is not None and isinstance(action, EditAction):
        path = shown  # the search text must still match, so an edit may name the file by its heading
    elif shown is not None:
        _reject(out, iteration, path, f"that is a heading of the code shown, not a file; the file is {shown}")
        return
    refused = tests.refusal(path) if tests is not None else None
    if refused is not None:  # the demo's first iteration edited the test's assertion to match the bug
        _reject(out, iteration, path, f"refused: {refused}")
        return
    before = copy.read(path)
    not_text = copy.why_not_text(path)
    if not_text is not None:
        _reject(out, iteration, path, f"refused: {not_text}")
        return
    if isinstance(action, WriteAction):
        after, match = action.content, ("new_file" if before is None else "exact")
    else:
        if before is None:
            _reject(out, iteration, path, "the file does not exist; use a 'write' action to create it")
            return
        try:
            result = apply_search_replace(before, action.search, action.replace, path)
        except EditMiss as exc:
            hint = _from_report(action.search, failures, copy)
            _reject(out, iteration, path, f"{exc}{hint}\nCurrent content of {path}:\n{_numbered(before)}")
            return
        after, match = result.text, result.match
    if after.replace("\r\n", "\n") == before:  # the 0.5B model sent `replace` equal to `search`: no change
        _reject(out, iteration, path, "that changes nothing: the new text is the text already there; "
                "write the corrected text, different from what is in the file")
        return
    bad_line = introduced_error(path, before, after)
    if bad_line is not None:
        _reject(out, iteration, path, f"the edit would introduce a syntax error at line {bad_line}")
        return
    copy.write(path, after)
    out.applied += 1
    out.events.append(EditApplied(iteration=iteration, path=path, action=action.kind, match=match))


def _heading_path(copy: WorkingCopy, path: str) -> str | None:
    """The file of a context heading used as a path (`calc.py:3-9 add (function)` -> `calc.py`), else None.

    Small models copy the heading of the code they were shown into an action's path.
    """
    match = _HEADING.match(path)
    if match is None or copy.exists(path) or not copy.exists(match.group(1)):
        return None
    return match.group(1)


async def _apply_install(action: InstallAction, sandbox: SandboxPort, iteration: int, out: ApplyOutcome,
                         copy: WorkingCopy, module: str) -> None:
    """An install through the gate (install_gate.py): the refused specs are said and go back to the model,
    the rest are installed and recorded with their origin; a package that lacks `module` is said."""
    wanted = _installable(action.packages, sandbox, _own_names(copy), out)
    if not wanted:
        return
    if sandbox.refusal(wanted) is not None:  # `-e .`, a URL: the sandbox's own reason, before any question
        await _apply_env_action(InstallAction(packages=wanted), sandbox, iteration, out, set())
        return
    language = sandbox.language
    gate = await sandbox.gate.decide(wanted, declared_packages(copy), language)
    refusals = [f"- install {spec!r} refused: {why}" for spec, why in gate.refused.items()]
    out.events.extend(Message(level="warning", text=why) for why in gate.refused.values())
    if not gate.allowed:
        out.events.append(EnvironmentChanged(iteration=iteration, action="install", detail=" ".join(wanted),
                                             ok=False, output="refused: " + " ".join(gate.refused.values())))
        out.problems.extend(refusals)
        return
    before = len(out.installs)
    await _apply_env_action(InstallAction(packages=list(gate.allowed)), sandbox, iteration, out, set(), gate.allowed)
    installed = out.installs[before:]
    if not module or not installed or (language is not None and module in language.fixtures):
        out.problems.extend(refusals)
        return
    provides = {m for f in installed for m in f.modules}
    if provides and module not in provides:  # no module known (a record without them): the tests will tell
        out.problems.extend(refusals)
        what = ", ".join(sorted(provides)) or "no module"
        text = f"installed {' '.join(gate.allowed)}, but none of it provides the module `{module}` (it gives {what})"
        out.events.append(Message(level="warning", text=text))
        out.problems.append(f"- {text}")


async def _apply_env_action(
    action: InstallAction | RunAction | Action, sandbox: SandboxPort, iteration: int, out: ApplyOutcome,
    own: set[str], origins: Mapping[str, Origin] | None = None,
) -> None:
    installed: list[InstalledPackage] = []
    if isinstance(action, InstallAction):
        wanted = _installable(action.packages, sandbox, own, out)
        if not wanted:
            return
        result = await sandbox.install(wanted)
        detail = " ".join(wanted)
        installed = _records(result, origins or {}) if not isinstance(result, Refused) and result.ok else []
    elif isinstance(action, RunAction):
        result = await sandbox.run_setup(action.command)
        detail = action.command
    else:
        return
    if isinstance(result, Refused):  # a spec the sandbox will not take (`-e .`): nothing ran; the model is told why
        out.events.append(EnvironmentChanged(iteration=iteration, action=action.kind, detail=detail, ok=False,
                                             output=f"refused: {result.reason}"))
        out.problems.append(f"- {action.kind} {detail!r} refused: {result.reason}")
        return
    output = (result.stdout + result.stderr)[-2000:]
    out.events.append(EnvironmentChanged(iteration=iteration, action=action.kind, detail=detail, ok=result.ok,
                                         output=output, installed=installed))
    if result.ok:
        out.applied += 1
        if isinstance(action, InstallAction):
            out.packages.extend(wanted)
            out.installs.extend(installed)
        else:
            out.commands.append(detail)
    else:
        out.env_failed = True
        why = "timed out" if result.timed_out else f"exit code {result.exit_code}"
        out.problems.append(f"- {action.kind} {detail!r} failed ({why}):\n{output[-800:]}")


def _records(result: ExecResult, origins: Mapping[str, Origin]) -> list[InstalledPackage]:
    """The install's distributions, each with why it was installed (a spec's origin, else a dependency)."""
    by_name = {package_name(spec): origin for spec, origin in origins.items()}
    files = result.files if isinstance(result, InstallResult) else ()
    return [InstalledPackage(name=f.name, version=f.version, filename=f.filename, sha256=f.sha256,
                             origin=by_name.get(normal_name(f.name), "dependency"),
                             built="sandbox" if f.built == "sandbox" else "index", modules=list(f.modules))
            for f in files]


def _installable(packages: list[str], sandbox: SandboxPort, own: set[str], out: ApplyOutcome) -> list[str]:
    """The packages worth installing: not the template's tools (`pytest==1.2.0` would replace the test
    runner), built-in modules, or the project's own code. The dropped ones are said, not refused:
    the 0.5B model asked for `pytest==1.2.0` and its own package in fix-loop plans."""
    wanted, dropped = without(packages, own | sandbox.template.provided)
    if dropped:
        what = ", ".join(dropped)
        out.events.append(Message(
            level="warning", text=f"Not installed: {what} (the {sandbox.template.name} environment or the "
            "project already has it; an install would replace the test runner or shadow the project's code)"))
    return wanted


def _own_names(copy: WorkingCopy) -> set[str]:
    """The project's own top-level module and folder names (`wordcount/core.py` -> `wordcount`)."""
    return {PurePosixPath(p).parts[0].removesuffix(".py") for p in copy.paths()}


def _reject(out: ApplyOutcome, iteration: int, path: str, reason: str) -> None:
    out.events.append(EditRejected(iteration=iteration, path=path, reason=reason.split("\nCurrent content")[0]))
    out.problems.append(f"- {path}: {reason}")


def _from_report(search: str, failures: list[TestFailure], copy: WorkingCopy) -> str:
    """A note when a missed search text was copied from the test report, with the lines the report is about.

    Qwen2.5-Coder 0.5B searched for `-273.15 != 32` and `assert {...} == {...}` (pytest's view of an
    assertion, values filled in), and the closest lines of the file were unrelated.
    """
    wanted = " ".join(search.split())
    if not wanted or not any(wanted in " ".join(f"{f.message}\n{f.traceback}".split()) for f in failures):
        return ""
    lines = []
    for f in failures:
        source = copy.read(f.file) if f.file and f.line else None
        if source is not None and f.line is not None and f.line <= len(rows := source.split("\n")):
            lines.append(f"{f.file}:{f.line}| {rows[f.line - 1]}")
    where = ("\nThe report is about these lines:\n" + "\n".join(dict.fromkeys(lines[:5]))) if lines else ""
    return f"\nThat search text is from the test report, not from the file.{where}"


def _numbered(text: str, limit: int = 200) -> str:
    lines = text.removesuffix("\n").split("\n")  # the text's own lines (a form feed is no line break)
    shown = "".join(f"{n:5d}| {line}\n" for n, line in enumerate(lines[:limit], 1))
    return shown + (f"... ({len(lines) - limit} more lines)\n" if len(lines) > limit else "")
