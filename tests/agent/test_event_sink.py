"""The one bridge from a step that emits to a sink to a front end's stream of events (agent/event_sink.py)."""

from __future__ import annotations

import asyncio
from contextvars import ContextVar

import pytest

from greenloop.agent.event_sink import EventList, EventSink, Stamping, streamed
from greenloop.agent.events import Done, Event, Message

WHO: ContextVar[str] = ContextVar("test_event_sink_who", default="nobody")


def said(text: str) -> Message:
    return Message(text=text)


async def test_events_arrive_in_order_while_the_step_runs_then_its_result() -> None:
    seen = asyncio.Event()  # set by the consumer once it has the first event: the step waits for it

    async def step(events: EventSink) -> Done:
        events.emit(said("one"))
        events.emit(said("two"))
        await seen.wait()  # the step cannot end before its first events reached the consumer
        events.emit(said("three"))
        return Done(outcome="green", summary="done")

    got: list[Event] = []
    async with asyncio.timeout(10):
        async for event in streamed(step):
            got.append(event)
            if len(got) == 2:
                seen.set()
    assert [e.text if isinstance(e, Message) else e.kind for e in got] == ["one", "two", "three", "done"]


async def test_closing_the_consumer_early_cancels_the_step_and_runs_its_finally() -> None:
    stopped: list[str] = []

    async def step(events: EventSink) -> Done:
        try:
            events.emit(said("started"))
            await asyncio.sleep(60)
            events.emit(said("never"))
            return Done(outcome="green", summary="never")
        except asyncio.CancelledError:
            stopped.append("cancelled")
            raise
        finally:
            await asyncio.sleep(0)  # a finally that awaits (closing a container) still runs to its end
            stopped.append("finally")

    stream = streamed(step)
    async with asyncio.timeout(10):
        first = await anext(stream)
        await stream.aclose()
    assert isinstance(first, Message) and first.text == "started"
    assert stopped == ["cancelled", "finally"]  # done before aclose returned, not later


async def test_cancelling_the_consumer_cancels_the_step_and_waits_for_its_finally() -> None:
    stopped: list[str] = []
    started = asyncio.Event()

    async def step(events: EventSink) -> Done:
        try:
            events.emit(said("started"))
            await asyncio.sleep(60)
            return Done(outcome="green", summary="never")
        finally:
            await asyncio.sleep(0.05)
            stopped.append("finally")

    async def consume() -> None:
        async for _ in streamed(step):
            started.set()

    task = asyncio.create_task(consume())
    async with asyncio.timeout(10):
        await started.wait()
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
    assert stopped == ["finally"]


async def test_what_the_step_raises_reaches_the_consumer_after_its_events() -> None:
    async def step(events: EventSink) -> Done:
        events.emit(said("before"))
        await asyncio.sleep(0)
        raise LookupError("the step broke")

    got: list[Event] = []
    with pytest.raises(LookupError, match="the step broke"):
        async for event in streamed(step):
            got.append(event)
    assert [e.text for e in got if isinstance(e, Message)] == ["before"] and len(got) == 1


async def test_the_step_runs_in_the_consumers_context() -> None:
    async def step(events: EventSink) -> Done:
        events.emit(said(WHO.get()))
        return Done(outcome="green", summary="done")

    async def consume() -> list[Event]:
        WHO.set("the editor")  # as the LSP sets the install question for its run's task
        return [event async for event in streamed(step)]

    first = (await asyncio.create_task(consume()))[0]
    assert isinstance(first, Message) and first.text == "the editor"


def test_a_kept_list_is_told_in_order_and_a_stamping_sink_stamps_each() -> None:
    kept = EventList()
    kept.emit(said("a"))
    kept.emit(said("b"))
    out = EventList()

    def stamp(event: Event) -> Event:
        event.run_id = "run-1"
        return event

    kept.tell(Stamping(out, stamp))
    assert [(e.text, e.run_id) for e in out.events if isinstance(e, Message)] == [("a", "run-1"), ("b", "run-1")]
