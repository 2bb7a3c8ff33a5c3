"""The lifecycle every run shares: RunStarted, the run's own events, one Done, all recorded as they go.

`recorded_run` starts the record, turns what the run raises into a Done with outcome "error"
(a GreenloopError's message as it is, anything else as "internal error": a front end must
survive anything a run does) and closes the record however the run ends (cancelled included).
It is where a run's events become the stream a front end reads: the run's body emits them to a
sink and returns its Done, and `event_sink.streamed` (the one bridge) yields them as they come.
"""

from __future__ import annotations

import logging
import secrets
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from contextlib import AbstractAsyncContextManager, nullcontext
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from greenloop.agent.event_sink import EventSink, streamed
from greenloop.agent.events import Done, Event, Message, RunMode, RunStarted
from greenloop.agent.orchestration.run_recorder import RunRecorder
from greenloop.agent.ports import Ports, open_ports
from greenloop.errors import GreenloopError
from greenloop.settings import Settings

log = logging.getLogger(__name__)


def new_run_id() -> str:
    return time.strftime("%Y%m%d-%H%M%S") + "-" + secrets.token_hex(3)


@dataclass
class RunScope:
    """What a run's body gets from its recorded run."""

    run_id: str
    started: float  # time.monotonic() when the run started; events' `at` counts from here
    settings: Settings
    recorder: RunRecorder
    injected: Ports | None = None
    workspace: Path | None = None  # the project's own Dockerfile is looked for here

    def ports(self, template: str) -> AbstractAsyncContextManager[Ports]:
        """The injected ports, else a model client (its calls recorded) and a sandbox opened for this run."""
        if self.injected is not None:
            return nullcontext(self.injected)
        return open_ports(self.settings, template, sink=self.recorder.call, label=self.run_id,
                          workspace=self.workspace)


Body = Callable[[RunScope, EventSink], Awaitable[Done]]  # a run: its events to the sink, its Done returned


def recorded_run(
    settings: Settings,
    mode: RunMode,
    workspace: Path,
    body: Body,
    *,
    ports: Ports | None = None,
    config: Mapping[str, Any] | None = None,
    user_error: Callable[[str], str] = str,
) -> AsyncIterator[Event]:
    """RunStarted, then `body`'s events and its Done (last), each recorded, as they come; see the module docstring.

    `config` is added to the settings recorded with the run; `user_error` words a GreenloopError's
    message for the Done that ends the run. Closing the stream or cancelling its reader cancels the run.
    """
    return streamed(lambda events: _recorded(settings, mode, workspace, body, events, ports, config, user_error))


async def _recorded(settings: Settings, mode: RunMode, workspace: Path, body: Body, events: EventSink,
                    ports: Ports | None, config: Mapping[str, Any] | None, user_error: Callable[[str], str]) -> Done:
    run_id = new_run_id()
    start = time.monotonic()
    recorder = RunRecorder(settings, workspace)
    recording = _Recording(recorder, events)
    try:
        recording.emit(RunStarted(
            run_id=run_id,
            mode=mode,
            workspace=str(workspace),
            config={**settings.model_dump(mode="json", exclude={"llm": {"api_key"}}), **(config or {})},
            seed=settings.llm.seed,
        ))
        if recorder.problem:
            events.emit(Message(run_id=run_id, text=recorder.problem, level="warning"))
        done = await body(RunScope(run_id, start, settings, recorder, ports, workspace), recording)
        recorder.event(done)
        return done
    except GreenloopError as exc:
        return _error_done(recorder, run_id, start, user_error(str(exc)))
    except Exception as exc:  # a front end must survive anything a run does; the message says what broke
        log.exception("%s run %s failed", mode, run_id)
        return _error_done(recorder, run_id, start, f"internal error: {type(exc).__name__}: {exc}")
    finally:
        recorder.close()


class _Recording:
    """A sink that records each event before passing it on."""

    def __init__(self, recorder: RunRecorder, events: EventSink) -> None:
        self.recorder, self.events = recorder, events

    def emit(self, event: Event) -> None:
        self.recorder.event(event)
        self.events.emit(event)


def _error_done(recorder: RunRecorder, run_id: str, start: float, message: str) -> Done:
    done = Done(run_id=run_id, at=round(time.monotonic() - start, 3), outcome="error", summary=message, evidence=message)
    recorder.event(done)
    return done
