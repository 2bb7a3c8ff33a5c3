"""The lifecycle every run shares: RunStarted, the run's own events, one Done, all recorded as they go.

`recorded_run` starts the record, turns what the run raises into a Done with outcome "error"
(a GreenloopError's message as it is, anything else as "internal error": a front end must
survive anything a run does) and closes the record however the run ends (cancelled included).
"""

from __future__ import annotations

import logging
import secrets
import time
from collections.abc import AsyncIterator, Callable, Mapping
from contextlib import AbstractAsyncContextManager, nullcontext
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from greenloop.agent.events import Done, Event, Message, RunMode, RunStarted
from greenloop.agent.orchestration.recording import RunRecorder
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


async def recorded_run(
    settings: Settings,
    mode: RunMode,
    workspace: Path,
    body: Callable[[RunScope], AsyncIterator[Event]],
    *,
    ports: Ports | None = None,
    config: Mapping[str, Any] | None = None,
    user_error: Callable[[str], str] = str,
) -> AsyncIterator[Event]:
    """RunStarted, then `body`'s events (which end with a Done), each recorded; see the module docstring.

    `config` is added to the settings recorded with the run; `user_error` words a GreenloopError's
    message for the Done that ends the run.
    """
    run_id = new_run_id()
    start = time.monotonic()
    recorder = RunRecorder(settings, workspace)
    try:
        started = RunStarted(
            run_id=run_id,
            mode=mode,
            workspace=str(workspace),
            config={**settings.model_dump(mode="json", exclude={"llm": {"api_key"}}), **(config or {})},
            seed=settings.llm.seed,
        )
        recorder.event(started)
        yield started
        if recorder.problem:
            yield Message(run_id=run_id, text=recorder.problem, level="warning")
        async for event in body(RunScope(run_id, start, settings, recorder, ports, workspace)):
            recorder.event(event)
            yield event
    except GreenloopError as exc:
        yield _error_done(recorder, run_id, start, user_error(str(exc)))
    except Exception as exc:  # a front end must survive anything a run does; the message says what broke
        log.exception("%s run %s failed", mode, run_id)
        yield _error_done(recorder, run_id, start, f"internal error: {type(exc).__name__}: {exc}")
    finally:
        recorder.close()


def _error_done(recorder: RunRecorder, run_id: str, start: float, message: str) -> Done:
    done = Done(run_id=run_id, at=round(time.monotonic() - start, 3), outcome="error", summary=message, evidence=message)
    recorder.event(done)
    return done
