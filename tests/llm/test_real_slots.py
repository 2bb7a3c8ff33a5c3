"""The embedded server with parallel slots (`local_model.parallel`): requests decoded together, a stopped stream's slot freed.

Opt-in (`pytest -m real_llm`): the real 1.5B model on the default server (xllamacpp), started by `open_llm`
as a run starts it. Asserts what the server reports (`GET /slots`), not the model's words.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

import httpx
import pytest

from greenloop.llm import CallRecord, open_llm
from greenloop.llm.local_model import ready_model
from greenloop.settings import LocalModelSettings, Settings

pytestmark = [pytest.mark.real_llm, pytest.mark.timeout(600)]
STORY = [{"role": "user", "content": "Write a very long story about a lighthouse keeper, in many short lines."}]


async def busy_slots(root: str) -> list[int]:
    """The ids of the slots llama.cpp's server says are processing a request."""
    async with httpx.AsyncClient(timeout=10) as http:
        response = await http.get(f"{root}/slots")
    assert response.status_code == 200, f"GET /slots: {response.status_code} {response.text[:200]}"
    slots: list[dict[str, Any]] = response.json()
    return [int(s["id"]) for s in slots if s.get("is_processing")]


async def freed_within(root: str, seconds: float) -> list[int]:
    """The busy slots once none is, or when `seconds` have passed."""
    deadline = time.monotonic() + seconds
    busy = await busy_slots(root)
    for _ in range(int(seconds / 0.2)):
        if not busy or time.monotonic() > deadline:
            break
        await asyncio.sleep(0.2)
        busy = await busy_slots(root)
    return busy


async def test_four_requests_are_decoded_together_and_a_stopped_stream_frees_its_slot() -> None:
    if ready_model(LocalModelSettings()) is None:
        pytest.fail("the embedded model is not fetched: run `greenloop model fetch` (CI's setup does)")
    settings = Settings(llm={"max_tokens": 32, "seed": 42, "max_retries": 0},
                        local_model={"n_ctx": 1024, "parallel": 4, "discover": False})
    records: list[CallRecord] = []
    async with open_llm(settings, sink=records.append) as llm:
        root = llm.base_url.removesuffix("/v1")
        assert llm.concurrency == 4 and llm.context_window == 1024  # each slot's window
        asks = [[{"role": "user", "content": f"Name three {kind}."}] for kind in ("colors", "fruits", "rivers", "birds")]
        texts = await asyncio.gather(*(llm.complete(ask, step="c", temperature=0.8) for ask in asks))
        assert all(text.strip() for text in texts)
        assert [r.outcome for r in records] == ["ok"] * 4
        first_tokens = [r.started_at + (r.ttft or r.latency) for r in records]
        ends = [r.started_at + r.latency for r in records]
        assert max(first_tokens) < min(ends)  # all four were being decoded before any of them ended

        text = await llm.complete(STORY, step="story", max_tokens=900, stop=lambda so_far: so_far.count("\n") >= 2)
        assert records[-1].finish_reason == "stopped" and text.count("\n") >= 2
        busy = await freed_within(root, 10)  # 900 tokens take minutes here: a slot busy after 10 s was not freed
        assert busy == [], f"slots {busy} still processing after the stream was closed"

        after = await llm.complete([{"role": "user", "content": "Say OK."}], step="after", max_tokens=8)
        assert after.strip() and records[-1].outcome == "ok"  # the server stays healthy
