"""A recorded run ends in one Done, whatever its body does, and its record is always closed."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

from greenloop.agent.event_sink import EventSink
from greenloop.agent.events import Done, Message, RunStarted
from greenloop.agent.orchestration.run_lifecycle import Body, RunScope, recorded_run
from greenloop.errors import GreenloopError
from greenloop.run_records import RunStore
from greenloop.settings import Settings
from tests.agent.conftest import collect


def _settings(tmp_path: Path) -> Settings:
    return Settings(runs={"store": str(tmp_path / "runs.sqlite3")}, local_model={"enabled": False})


def _body(exc: Exception, working: float = 0.0) -> Body:
    async def body(run: RunScope, events: EventSink) -> Done:
        events.emit(Message(run_id=run.run_id, text="working"))
        await asyncio.sleep(working)  # still working when its front end stops listening (the run does not wait for it)
        raise exc

    return body


async def test_a_greenloop_error_ends_the_run_in_its_own_words(tmp_path: Path) -> None:
    events, done = await collect(recorded_run(
        _settings(tmp_path), "generate", tmp_path, _body(GreenloopError("the plan is empty.")),
        config={"generate_request": {"template": "python"}}, user_error=lambda m: f"{m.rstrip('. ')}. Nothing written.",
    ))
    assert [e.kind for e in events] == ["run_started", "message", "done"]
    assert (done.outcome, done.summary) == ("error", "the plan is empty. Nothing written.")
    assert isinstance(events[0], RunStarted) and events[0].config["generate_request"] == {"template": "python"}
    with RunStore.open(tmp_path / "runs.sqlite3") as store:
        run = store.get_run(done.run_id)
    assert (run.mode, run.outcome, run.summary) == ("generate", "error", done.summary)
    assert [e["kind"] for e in run.events] == ["message", "done"]


async def test_anything_else_is_an_internal_error_the_run_survives(tmp_path: Path) -> None:
    before = time.time()
    _, done = await collect(recorded_run(_settings(tmp_path), "fix", tmp_path, _body(KeyError("x"))))
    assert (done.outcome, done.summary) == ("error", "internal error: KeyError: 'x'")
    with RunStore.open(tmp_path / "runs.sqlite3") as store:
        run = store.get_run(done.run_id)
    assert run.outcome == "error"
    assert before <= run.started_at <= time.time()  # the wall-clock start, recorded as such


async def test_a_run_stopped_by_its_front_end_is_recorded_as_cancelled(tmp_path: Path) -> None:
    events = recorded_run(_settings(tmp_path), "fix", tmp_path, _body(KeyError("never reached"), working=60))
    started = await anext(events)
    await anext(events)  # the body's message; then the front end stops listening
    await events.aclose()
    with RunStore.open(tmp_path / "runs.sqlite3") as store:
        run = store.get_run(started.run_id)
    assert (run.outcome, run.summary) == ("cancelled", "run ended: cancelled")
