"""What a bench cell's agent run came to: its events read to the Done, with what the cell adds (candidates, pass@k)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from typing import Any

from greenloop.errors import GreenloopError
from greenloop.retrieval.index import is_test_path


async def consume(
    events: AsyncIterator[Any], seen: dict[str, Any], on_event: Callable[[Any], None] | None = None
) -> dict[str, Any]:
    """Read a run's events to its Done (as a dict, with `extra` from `cell_extra`); closes the run however it ends."""
    done: dict[str, Any] | None = None
    candidates: list[bool] = []  # each tested candidate, in the order asked: did it turn the tests green?
    try:
        async for event in events:
            if on_event is not None:
                on_event(event)
            if event.kind == "budget":
                seen.update(event.model_dump(mode="json"))
            if event.kind == "candidate_tested" and event.status == "tested":
                candidates.append(event.green)
            if event.kind == "done":
                done = event.model_dump(mode="json", exclude={"changes"})
                done["extra"] = cell_extra(candidates, [c.path for c in event.changes.files])
                done["extra"].update(kind=event.changes.kind, risky=event.changes.risk_reason)
                seen.update(done)
                done["changes"] = event.changes  # for a caller that checks them (realbugs)
    finally:  # on cancel too: the agent stops its model calls and sandbox
        close = getattr(events, "aclose", None)
        if close is not None:
            await close()
    if done is None:
        raise GreenloopError("the run ended without a result")
    return done


def cell_extra(candidates: list[bool], changed: list[str]) -> dict[str, Any]:
    """What a cell adds to its result: candidates tested, the first green one (pass@k), test files changed."""
    first = next((i + 1 for i, green in enumerate(candidates) if green), None)
    return {"candidates": len(candidates), "first_green": first,
            "tests_edited": sum(1 for p in changed if is_test_path(p))}
