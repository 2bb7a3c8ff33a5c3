"""How many requests of one client are at the endpoint at once: `llm.concurrency`, the embedded server's slots, one after a 429.

A round sends its candidates' requests together; the gate lets `limit` of them through and holds the
rest, in the order they came (no limit: all go, as concurrent callers' requests went before the gate). A server that answers HTTP 429 (too many requests) while more than one
is let through gets one at a time for the rest of the client's life; the gate keeps a note of why, for
the run to show (`take_notes`).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager


class RequestGate:
    """Lets at most `limit` requests through at once, first come first served."""

    def __init__(self, limit: int | None) -> None:
        self.limit = None if limit is None else max(1, limit)
        self.inside = 0
        self._turn = asyncio.Condition()
        self._notes: list[str] = []

    @asynccontextmanager
    async def through(self) -> AsyncIterator[int]:
        """Wait for a place, hold it while the request runs; gives how many are inside with it."""
        async with self._turn:
            await self._turn.wait_for(lambda: self.limit is None or self.inside < self.limit)
            self.inside += 1
            inside = self.inside
        try:
            yield inside
        finally:
            async with self._turn:
                self.inside -= 1
                self._turn.notify_all()

    def one_at_a_time(self, why: str) -> bool:
        """From now on one request at a time, noted with `why`; False when it already was."""
        if self.limit == 1:
            return False
        self.limit = 1
        self._notes.append(why)
        return True

    def note(self, text: str) -> None:
        """A line for the run to show (a server with fewer slots than asked)."""
        self._notes.append(text)

    def take_notes(self) -> list[str]:
        """The notes not taken yet."""
        notes, self._notes = self._notes, []
        return notes
