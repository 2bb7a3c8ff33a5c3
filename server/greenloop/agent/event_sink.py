"""Where the loop's events go: a sink passed in to every step, and the one bridge that streams them to a front end.

A step of the loop returns its result as a value and reports its progress as it goes with `events.emit(event)`
(the sink is an explicit argument, as Aider and SWE-agent pass a reporter). A front end consumes an
`AsyncIterator[Event]`: `streamed` is the one place that turns a step into one. It runs the step as a task whose
sink is a queue and yields each event as it arrives, then the step's result (last). Closing the iterator or
cancelling its consumer cancels the task and waits for it, so the step's own `finally` stops what it started
(containers, model streams); what the task raises reaches the consumer after the events emitted before it.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator, Awaitable, Callable
from typing import Protocol

from greenloop.agent.events import Event


class EventSink(Protocol):
    """Takes a step's events in the order they happen; `emit` never blocks and never waits for a reader."""

    def emit(self, event: Event) -> None:
        ...


class EventList:
    """A sink that keeps the events, in order, to be told later or read (`events`)."""

    def __init__(self) -> None:
        self.events: list[Event] = []

    def emit(self, event: Event) -> None:
        self.events.append(event)

    def tell(self, sink: EventSink) -> None:
        """Emit the kept events to `sink`, in order."""
        for event in self.events:
            sink.emit(event)


class Stamping:
    """A sink that passes each event on to `sink` after `stamp` (the run's id and time: `RunContext.stamp`)."""

    def __init__(self, sink: EventSink, stamp: Callable[[Event], Event]) -> None:
        self.sink, self.stamp = sink, stamp

    def emit(self, event: Event) -> None:
        self.sink.emit(self.stamp(event))


class _Queued:
    """The bridge's sink: each event into the queue the consumer reads (None, put when the task is done, ends it)."""

    def __init__(self, queue: asyncio.Queue[Event | None]) -> None:
        self.queue = queue

    def emit(self, event: Event) -> None:
        self.queue.put_nowait(event)


async def streamed(step: Callable[[EventSink], Awaitable[Event]]) -> AsyncGenerator[Event, None]:
    """`step`'s events as they arrive, then its result (last); see the module docstring.

    The task starts on the first `__anext__`, in the consumer's context (its context variables are the step's)."""
    queue: asyncio.Queue[Event | None] = asyncio.Queue()
    task = asyncio.ensure_future(step(_Queued(queue)))
    task.add_done_callback(lambda _: queue.put_nowait(None))  # after every event the step emitted
    try:
        while (item := await queue.get()) is not None:
            yield item
        result = task.result()  # raises what the step raised (the events before it were yielded)
    finally:
        if not task.done():  # the consumer closed the iterator or was cancelled: the step goes with it
            task.cancel()
            await asyncio.wait([task])
            if not task.cancelled():
                task.exception()  # what its cleanup raised is not the consumer's: the consumer left
    yield result
