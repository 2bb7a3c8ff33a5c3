"""Agent events -> `greenloop/loopEvent` notifications and cancellable work-done progress."""

from __future__ import annotations

import logging
import uuid
from typing import Any

from lsprotocol import types
from pydantic import BaseModel
from pygls.lsp.server import LanguageServer

from greenloop.agent import events as ev
from greenloop.agent.orchestration.describe import describe
from greenloop.lsp.protocol import LOOP_EVENT, LoopEventParams

log = logging.getLogger(__name__)


def loop_event_params(event: BaseModel) -> LoopEventParams:
    """The typed notification params of one event (the full event JSON rides along)."""
    data: dict[str, Any] = event.model_dump(mode="json")
    return LoopEventParams(
        run_id=str(data.get("run_id", "")),
        kind=str(data.get("kind", "")),
        text=describe(event),
        iteration=data.get("iteration"),
        max_iterations=data.get("max_iterations"),
        # the state's tests only: a candidate's counts (its own event fields) are not the run's
        passed=data.get("passed") if data.get("kind") != "candidate_tested" else None,
        failed=(data["failed"] + data.get("errors", 0))
        if isinstance(data.get("failed"), int) and data.get("kind") != "candidate_tested" else None,
        prompt_tokens=data.get("prompt_tokens"),
        completion_tokens=data.get("completion_tokens"),
        cost=data.get("cost"),
        outcome=data.get("outcome"),
        event=data,
    )


def progress_message(event: BaseModel, state: dict[str, int]) -> str | None:
    """The progress report line an event changes, e.g. 'iteration 2/5: 3 failed'; None: no change."""
    match event:
        case ev.IterationStarted():
            state["iteration"], state["max"] = event.iteration, event.max_iterations
            return f"iteration {event.iteration}/{event.max_iterations}"
        case ev.TestsRan():
            prefix = f"iteration {state['iteration']}/{state['max']}: " if state.get("max") else ""
            bad = event.failed + event.errors
            return prefix + (f"{bad} failed" if bad else f"{event.passed} passed")
        case ev.Diagnosis() | ev.PlanMade() | ev.Message() | ev.CandidateAsked() | ev.CandidateTested() | ev.RoundEnded():
            prefix = f"iteration {state['iteration']}/{state['max']}: " if state.get("max") else ""
            return prefix + describe(event)[:120]
    return None


class LoopProgress:
    """One server-created, cancellable work-done progress (a no-op when the client cannot show it)."""

    def __init__(self, server: LanguageServer, title: str) -> None:
        self.server = server
        self.title = title
        self.token: str | None = None
        self.state: dict[str, int] = {}

    @property
    def supported(self) -> bool:
        window = self.server.client_capabilities.window
        return bool(window and window.work_done_progress)

    async def begin(self, message: str) -> None:
        if not self.supported:
            return
        token = f"greenloop-{uuid.uuid4()}"
        try:
            await self.server.work_done_progress.create_async(token)
        except Exception as exc:  # the client refused: run without a progress bar
            log.warning("work done progress refused: %s", exc)
            return
        self.token = token
        begin = types.WorkDoneProgressBegin(
            title=self.title, cancellable=True, message=message, percentage=None
        )
        self.server.work_done_progress.begin(token, begin)

    def report(self, message: str) -> None:
        if self.token is not None:
            self.server.work_done_progress.report(self.token, types.WorkDoneProgressReport(message=message))

    def on_event(self, event: BaseModel) -> None:
        """Forward an event: a loopEvent notification (diagnosis deltas skipped) and maybe a report."""
        if isinstance(event, ev.DiagnosisDelta):
            return
        self.server.protocol.notify(LOOP_EVENT, loop_event_params(event))
        message = progress_message(event, self.state)
        if message:
            self.report(message)

    def end(self, message: str) -> None:
        if self.token is None:
            return
        token, self.token = self.token, None
        self.server.work_done_progress.end(token, types.WorkDoneProgressEnd(message=message))
        self.server.work_done_progress.tokens.pop(token, None)
