"""Drives one agent run at a time for the editor: progress, cancel, the reviewable edit, the verdict."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from pathlib import Path

from lsprotocol import types
from pygls.exceptions import JsonRpcInvalidParams, JsonRpcInvalidRequest

from greenloop.agent.events import Diagnosis, Done, EnvironmentReady, Event, TestsRan
from greenloop.agent.install_gate import ask_user
from greenloop.errors import GreenloopError
from greenloop.lsp import diagnostics as diag
from greenloop.lsp.edits import EditSupport, preview_description, workspace_edit
from greenloop.lsp.progress import LoopProgress
from greenloop.lsp.protocol import (
    BUSY_MESSAGE,
    INSTALL_NO,
    INSTALL_QUESTION,
    INSTALL_YES,
    VERDICT_QUESTION,
    VERDICTS,
)
from greenloop.lsp.workspace_server import WorkspaceServer
from greenloop.run_records import record_verdict
from greenloop.settings import Settings
from greenloop_sandbox.report import TestFailure

log = logging.getLogger(__name__)

# Outcomes whose change set is offered to the user (the CLI's --apply uses the same rule).
# Outcomes after which "did it work?" makes no sense.
NO_VERDICT = ("cancelled", "error", "already_green")

StartRun = Callable[[Settings], AsyncIterator[Event]]


@dataclass
class RunResult:
    """What one run came to, for the command / feedback answers."""

    run_id: str
    outcome: str
    summary: str
    done: Done | None = None
    edit: types.WorkspaceEdit | None = None
    applied: bool = False
    last_tests: TestsRan | None = None
    diagnosis: str = ""


@dataclass
class _Active:
    kind: str
    progress: LoopProgress
    task: asyncio.Task[RunResult] | None = None
    cancel_requested: bool = False  # a cancel that came before the task existed


class LoopRunner:
    """Runs at most one loop; a second is refused with InvalidRequest and BUSY_MESSAGE."""

    def __init__(self, server: WorkspaceServer) -> None:
        self.server = server
        self.active: _Active | None = None

    def tasks(self) -> list[asyncio.Task[RunResult]]:
        return [self.active.task] if self.active and self.active.task else []

    def cancel(self) -> int:
        """Cancel the running loop (if any); returns how many were cancelled."""
        if self.active is None or (self.active.task is not None and self.active.task.done()):
            return 0
        self.active.cancel_requested = True
        if self.active.task is not None:
            self.active.task.cancel()
        return 1

    def cancel_token(self, token: int | str) -> None:
        if self.active and self.active.progress.token == token:
            self.cancel()

    async def run(
        self,
        kind: str,
        title: str,
        start: StartRun,
        *,
        scope: list[str] | None = None,
        offer: bool = True,
        need_root: bool = True,
        store_in: Path | None = None,
    ) -> RunResult:
        """Run `start(settings)` to its Done, send its changes as a reviewable edit, then ask the verdict."""
        if self.active is not None:
            raise JsonRpcInvalidRequest(BUSY_MESSAGE)
        active = self.active = _Active(kind, LoopProgress(self.server, title))
        result: RunResult | None = None
        try:
            settings = await self.server.settings(need_root=need_root)
            try:
                events = start(settings)
            except GreenloopError as exc:
                raise JsonRpcInvalidParams(str(exc)) from exc
            await active.progress.begin("starting")
            active.task = asyncio.ensure_future(self._drive(active.progress, events, offer))
            if active.cancel_requested:
                active.task.cancel()
            try:
                result = await asyncio.shield(active.task)
            except asyncio.CancelledError:
                current = asyncio.current_task()
                if current is not None and current.cancelling():
                    # Our request itself was cancelled ($/cancelRequest, shutdown): the loop goes with it.
                    active.task.cancel()
                    await asyncio.wait([active.task], timeout=30)
                    raise
                # The loop was cancelled before it got going.
                result = RunResult(run_id="", outcome="cancelled", summary="cancelled by the user")
        finally:
            active.progress.end(f"{result.outcome}: {result.summary}" if result else "stopped")
            self.active = None
        if result.applied and result.outcome == "green" and result.last_tests is not None:
            await self.refresh_diagnostics(result.last_tests, scope)
        if result.outcome not in NO_VERDICT and result.run_id:
            self.server.spawn(self.ask_verdict(settings, store_in or self.server.root, result.run_id))
        return result

    async def _drive(self, progress: LoopProgress, events: AsyncIterator[Event], offer: bool) -> RunResult:
        """Consume the run's events; a cancel (of this task) ends it with outcome "cancelled"."""
        result = RunResult(run_id="", outcome="cancelled", summary="cancelled")
        ask_user.set(self.ask_install)  # this task's context: the run's installs ask through the editor
        try:
            async for event in events:
                progress.on_event(event)
                result.run_id = result.run_id or event.run_id
                if isinstance(event, TestsRan):
                    result.last_tests = event
                elif isinstance(event, Diagnosis):
                    result.diagnosis = event.text
                elif isinstance(event, EnvironmentReady) and event.problem is not None and event.problem.file:
                    await publish_failures(self.server, [environment_failure(event)], None)
                elif isinstance(event, Done):
                    result.done, result.outcome, result.summary = event, event.outcome, event.summary
            if result.done is None:
                result.outcome, result.summary = "error", "the run ended without a result"
            elif offer:
                await self._offer(progress, result)
        except asyncio.CancelledError:
            await _close(events)
            if result.done is None:
                progress.on_event(
                    Done(run_id=result.run_id, outcome="cancelled", summary="cancelled by the user")
                )
            result.outcome, result.summary, result.applied = "cancelled", "cancelled by the user", False
        except GreenloopError as exc:
            result.outcome, result.summary = "error", str(exc)
        return result

    async def _offer(self, progress: LoopProgress, result: RunResult) -> None:
        """Send the change set as a workspace edit that needs confirmation (only for a passing result)."""
        assert result.done is not None
        done = result.done
        if not done.offers_changes:
            if done.changes.files:
                result.summary += " (changes not offered: the tests did not pass with them)"
            return
        server = self.server
        label = done.changes.label
        if label:  # a risky fix is said as such in the result and in the diff view (risk.py)
            result.summary += f" ({label})"
        edit = workspace_edit(
            server.root,
            done.changes,
            description=preview_description(done, result.diagnosis),
            version_of=server.version_of,
            support=EditSupport.of(server.client_capabilities),
        )
        if done.changes.packages or done.changes.commands:
            extra = ", ".join([*done.changes.packages, *done.changes.commands])
            result.summary += f" (environment changes to make yourself: {extra})"
        if edit is None:
            return
        result.edit = edit
        progress.report("waiting for you to review the changes")
        answer = await server.workspace_apply_edit_async(
            types.ApplyWorkspaceEditParams(edit=edit, label=f"greenloop ({label}): {done.summary}"[:200] if label
                                           else f"greenloop: {done.summary}"[:200])
        )
        result.applied = bool(answer and answer.applied)
        if answer and not answer.applied and answer.failure_reason:
            result.summary += f" (not applied: {answer.failure_reason})"

    async def refresh_diagnostics(self, tests: TestsRan, scope: list[str] | None) -> None:
        failures = [TestFailure.model_validate(item) for item in tests.failures]
        await publish_failures(self.server, failures, scope)

    async def ask_install(self, spec: str) -> bool:
        """The person's yes to installing a package nobody declared; a dismissed question is a no."""
        params = types.ShowMessageRequestParams(
            type=types.MessageType.Warning, message=INSTALL_QUESTION.format(name=spec),
            actions=[types.MessageActionItem(title=INSTALL_YES), types.MessageActionItem(title=INSTALL_NO)],
        )
        try:
            answer = await self.server.window_show_message_request_async(params)
        except Exception as exc:  # the client cannot ask: not installed
            log.info("install question not answered: %s", exc)
            return False
        return bool(answer and answer.title == INSTALL_YES)

    async def ask_verdict(self, settings: Settings, workspace: Path, run_id: str) -> None:
        """'Did it run / work / perfect?' -> the run store; a dismissed question is a skip."""
        params = types.ShowMessageRequestParams(
            type=types.MessageType.Info,
            message=VERDICT_QUESTION,
            actions=[types.MessageActionItem(title=title) for title in VERDICTS],
        )
        try:
            answer = await self.server.window_show_message_request_async(params)
        except Exception as exc:  # the client cannot ask: nothing to store
            log.info("verdict question not answered: %s", exc)
            return
        verdict = VERDICTS.get(answer.title, "skip") if answer else "skip"
        if verdict == "skip" or not settings.runs.enabled:
            return
        try:
            await asyncio.to_thread(record_verdict, settings, workspace, run_id, verdict)
        except GreenloopError as exc:
            self.server.show(f"could not record the answer: {exc}", types.MessageType.Warning)


async def publish_failures(
    server: WorkspaceServer, failures: list[TestFailure], scope: list[str] | None
) -> None:
    """Turn failures into diagnostics (reading files in a thread) and publish every affected file."""
    root, overlays = server.root, server.overlays()

    def build() -> list[diag.TestDiagnostic]:
        built = (diag.build(f, root, lambda rel: server.text_of(rel, overlays)) for f in failures)
        return [item for item in built if item is not None]

    server.diagnostics.update(await asyncio.to_thread(build), scope)
    files = server.diagnostics.per_file()
    for uri, items in files.items():
        server.text_document_publish_diagnostics(types.PublishDiagnosticsParams(uri=uri, diagnostics=items))
    server.diagnostics.mark_published(files)


def environment_failure(event: EnvironmentReady) -> TestFailure:
    """The environment step's problem as a diagnostic's failure: on its file and line, the cause and the fix."""
    assert event.problem is not None
    issue = event.problem
    return TestFailure(test_id="<environment>", file=issue.file, line=issue.line, kind="error",
                       message=f"the tests cannot run in the sandbox ({issue.problem.replace('_', ' ')}): "
                               f"{issue.message}. {issue.fix}".strip())


async def _close(events: AsyncIterator[Event]) -> None:
    """Close a cancelled run's generator so its sandbox and model calls are cleaned up."""
    aclose = getattr(events, "aclose", None)
    if aclose is not None:
        try:
            await aclose()
        except (Exception, asyncio.CancelledError) as exc:
            log.debug("closing a cancelled run: %r", exc)
