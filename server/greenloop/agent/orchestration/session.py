"""Entry points for front ends: fix, improve, run_tests, apply_changes. Each run is recorded."""

from __future__ import annotations

import os
import shutil
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from greenloop.agent.changes.paths import safe_relpath
from greenloop.agent.changes.text import exact_text
from greenloop.agent.changes.working_copy import WorkingCopy
from greenloop.agent.event_sink import EventSink
from greenloop.agent.events import ChangeSet, Done, Event, RunMode
from greenloop.agent.orchestration.focus import Focus
from greenloop.agent.orchestration.loop import fix_loop
from greenloop.agent.orchestration.run_context import RunContext
from greenloop.agent.orchestration.run_lifecycle import RunScope, recorded_run
from greenloop.agent.ports import Ports, choose_template, open_sandbox_for
from greenloop.errors import GreenloopError
from greenloop.settings import Settings
from greenloop_sandbox import TestReport


@dataclass
class FixRequest:
    workspace: Path
    overlays: Mapping[str, str] = field(default_factory=dict)
    test_ids: list[str] | None = None
    instruction: str | None = None
    focus: Focus | None = None
    interpreter: Mapping[str, str] | None = None  # the editor's interpreter: package name -> version
    interpreter_note: str = ""  # why the editor sent no listing (timed out, no pip): a line of the environment step


def fix(request: FixRequest, settings: Settings, *, ports: Ports | None = None) -> AsyncIterator[Event]:
    """Run the test-fix loop on the workspace; the user's files are not touched."""
    return _run("fix", request, settings, ports)


def improve(request: FixRequest, settings: Settings, *, ports: Ports | None = None) -> AsyncIterator[Event]:
    """The same loop, driven by a person's instruction; the tests must still pass after it."""
    if not (request.instruction or "").strip():
        raise GreenloopError("improve needs an instruction: say what should change")
    return _run("improve", request, settings, ports)


def _run(mode: RunMode, request: FixRequest, settings: Settings, ports: Ports | None) -> AsyncIterator[Event]:
    async def body(run: RunScope, events: EventSink) -> Done:
        copy = WorkingCopy.from_workspace(request.workspace, request.overlays)
        template = choose_template(settings, copy.files())
        async with run.ports(template) as live:
            context = RunContext(
                settings=settings, ports=live, workspace=request.workspace, template=template, run_id=run.run_id,
                started=run.started,
                # tests are the spec; an improve request that is about tests may change them
                tests_writable=mode == "improve" and "test" in (request.instruction or "").lower(),
            )
            return await fix_loop(
                context, copy, events, test_ids=request.test_ids, instruction=request.instruction, focus=request.focus,
                interpreter=request.interpreter, interpreter_note=request.interpreter_note,
            )

    return recorded_run(settings, mode, request.workspace, body, ports=ports)


async def run_tests(
    workspace: Path,
    settings: Settings,
    *,
    overlays: Mapping[str, str] | None = None,
    test_ids: list[str] | None = None,
) -> TestReport:
    """Run the workspace's tests (with unsaved buffers) in a sandbox; no model involved."""
    copy = WorkingCopy.from_workspace(workspace, overlays)
    template = choose_template(settings, copy.files())
    async with open_sandbox_for(settings, template, workspace=workspace) as sandbox:
        await sandbox.sync(copy.files())
        return await sandbox.run_tests(test_ids, timeout=settings.sandbox.test_timeout)


def apply_changes(workspace: Path, changes: ChangeSet) -> list[str]:
    """Write a change set to the user's files; refuses if any file changed since the run read it.

    Compared and written as bytes (no newline translation): a change's `before`/`after` hold the
    file's exact text, CRLF and BOM included, so a file nobody changed always matches.
    """
    planned: list[tuple[Path, str | None]] = []
    for change in changes.files:
        rel = safe_relpath(workspace, change.path)
        target = workspace / rel
        current = exact_text(target.read_bytes()) if target.is_file() else None
        if current != change.before:
            raise GreenloopError(f"{rel} changed since greenloop read it; run again to get a fresh change set")
        planned.append((target, change.after))
    written = []
    for target, after in planned:
        if after is None:
            target.unlink(missing_ok=True)
        else:
            target.parent.mkdir(parents=True, exist_ok=True)
            tmp = target.with_name(f".{target.name}.greenloop-tmp")
            tmp.write_bytes(after.encode("utf-8"))
            if target.is_file():
                shutil.copymode(target, tmp)  # a script stays executable
            os.replace(tmp, target)
        written.append(str(target.relative_to(workspace)))
    return written
