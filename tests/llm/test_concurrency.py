"""Requests sent together (`llm.concurrency`), one at a time after a 429, and a stream the caller stops early.

Real HTTP against the scripted server: what it saw (arrival times, a client that went away) is the evidence.
"""

from __future__ import annotations

import asyncio
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from greenloop.llm import CallRecord, LLMClient, open_llm, xllamacpp_server
from greenloop.llm.local_binary import ServerChoice
from greenloop.llm.local_command import server_command
from greenloop.llm.local_server import LocalModelServer
from greenloop.settings import LocalModelSettings, Settings
from tests.support.scripted_llm import Reply, ScriptedLLM, rate_limited

pytestmark = pytest.mark.timeout(60)
HI = [{"role": "user", "content": "hi"}]


def settings_for(base: Settings, **llm: object) -> Settings:
    return base.model_copy(update={"llm": base.llm.model_copy(update=llm)})


def arrivals(scripted_llm: ScriptedLLM) -> list[float]:
    first = scripted_llm.requests[0].at
    return sorted(round(r.at - first, 2) for r in scripted_llm.requests)


async def test_requests_go_out_together_up_to_llm_concurrency(
    scripted_llm: ScriptedLLM, scripted_settings: Settings
) -> None:
    scripted_llm.script(Reply("done", delay=0.6), step="s")
    async with open_llm(settings_for(scripted_settings, concurrency=2)) as llm:
        assert llm.concurrency == 2
        texts = await asyncio.gather(*(llm.complete(HI, step="s") for _ in range(4)))
    assert texts == ["done"] * 4
    times = arrivals(scripted_llm)
    assert times[1] < 0.3 and times[2] >= 0.5, times  # two at once, the next two once those answered


async def test_unset_a_round_asks_one_at_a_time_and_other_callers_are_not_held(
    scripted_llm: ScriptedLLM, scripted_settings: Settings
) -> None:
    """An endpoint that is not the embedded one, `llm.concurrency` unset: as before the gate, a round sends one
    candidate at a time (`concurrency` 1) and concurrent callers' requests (generation's files) go as they come."""
    scripted_llm.script(Reply("done", delay=0.3), step="s")
    async with open_llm(scripted_settings) as llm:
        assert llm.concurrency == 1
        await asyncio.gather(*(llm.complete(HI, step="s") for _ in range(3)))
    assert arrivals(scripted_llm)[2] < 0.2


def one_at_a_time_server(seconds: float) -> Any:
    """A scripted endpoint that answers 429 to a request arriving while it serves another."""
    lock, serving = threading.Lock(), [0.0]

    def reply(body: dict[str, Any]) -> Reply:
        with lock:
            now = time.monotonic()
            if now < serving[0]:
                return rate_limited(0.05, "Too many concurrent requests")
            serving[0] = now + seconds * 0.8  # free again a little before its reply is sent
        return Reply("fine", delay=seconds)

    return reply


async def test_a_429_to_requests_sent_together_falls_back_to_one_at_a_time_with_a_line(
    scripted_llm: ScriptedLLM, scripted_settings: Settings
) -> None:
    scripted_llm.script(one_at_a_time_server(0.4), step="s")
    records: list[CallRecord] = []
    # no retries allowed: only the fall-back (not a counted retry) can turn the 429s into replies
    async with open_llm(settings_for(scripted_settings, concurrency=3, max_retries=0), sink=records.append) as llm:
        texts = await asyncio.gather(*(llm.complete(HI, step="s") for _ in range(3)))
        assert llm.concurrency == 1
        notes = llm.take_notes()
        assert llm.take_notes() == []  # each line is said once
    assert texts == ["fine"] * 3
    assert [r.outcome for r in records] == ["ok"] * 3 and all(r.retries == 0 for r in records)
    assert 429 in [r.status for r in scripted_llm.requests]
    assert len(notes) == 1 and "HTTP 429" in notes[0] and "one at a time" in notes[0]


async def test_a_429_to_a_request_sent_alone_is_an_ordinary_retry(
    scripted_llm: ScriptedLLM, scripted_settings: Settings
) -> None:
    scripted_llm.script(rate_limited(0.05), "fine", step="s")
    records: list[CallRecord] = []
    async with open_llm(settings_for(scripted_settings, concurrency=3), sink=records.append) as llm:
        assert await llm.complete(HI, step="s") == "fine"
        assert llm.concurrency == 3 and llm.take_notes() == []
    assert records[0].retries == 1


async def test_a_stop_rule_closes_the_stream_before_the_server_sent_the_whole_reply(
    scripted_llm: ScriptedLLM, scripted_settings: Settings
) -> None:
    reply = "line one\nline two\nENOUGH\n" + "more prose the caller does not need\n" * 40
    scripted_llm.script(Reply(reply, chunk_size=8, chunk_delay=0.02), step="s")
    records: list[CallRecord] = []
    async with open_llm(scripted_settings, sink=records.append) as llm:
        text = await llm.complete(HI, step="s", stop=lambda so_far: "ENOUGH\n" in so_far)
    assert text.startswith("line one\nline two\nENOUGH") and len(text) < 40
    (record,) = records
    assert record.finish_reason == "stopped" and record.outcome == "ok"
    assert record.completion_tokens < 20  # counted from what came, not the whole reply
    request = scripted_llm.requests[0]
    for _ in range(100):  # the server notices the closed connection at its next chunk
        if request.aborted:
            break
        await asyncio.sleep(0.02)
    assert request.stream and request.aborted


async def test_a_stop_rule_that_never_holds_leaves_the_reply_whole(
    scripted_llm: ScriptedLLM, scripted_settings: Settings
) -> None:
    reply = "line one\nline two\n" * 5
    scripted_llm.script(Reply(reply, chunk_size=8), step="s")
    async with open_llm(scripted_settings) as llm:
        assert await llm.complete(HI, step="s", stop=lambda so_far: False) == reply
    assert not scripted_llm.requests[0].aborted


def test_the_embedded_server_gets_its_slots_each_with_the_whole_window(tmp_path: Path) -> None:
    settings = LocalModelSettings(parallel=3, n_ctx=2048, threads=1)
    argv = server_command(ServerChoice("llama-server", tmp_path / "llama-server", "test"), settings,
                          tmp_path / "m.gguf", 8080, "local")
    assert argv[argv.index("-c") + 1] == "6144" and argv[argv.index("--parallel") + 1] == "3"
    xargs = xllamacpp_server.parse(server_command(ServerChoice("xllamacpp", None, "test"), settings,
                                                  tmp_path / "m.gguf", 8080, "local")[2:])
    assert (xargs.ctx_size, xargs.parallel) == (6144, 3)


async def test_a_server_without_slots_is_asked_one_at_a_time_and_the_run_is_told(
    scripted_llm: ScriptedLLM, scripted_settings: Settings, tmp_path: Path
) -> None:
    server = LocalModelServer(LocalModelSettings(parallel=4, cache_dir=str(tmp_path)))
    server.choice = ServerChoice("llama-cpp-python", None, "test")
    slots, why = server.slots
    assert slots == 1 and "one request at a time" in why
    server.choice = ServerChoice("xllamacpp", None, "test")
    assert server.slots == (4, "")
    scripted_llm.script(Reply("done", delay=0.3), step="s")
    settings = settings_for(scripted_settings, concurrency=4)
    async with open_llm(settings) as plain:
        assert plain.concurrency == 4
    llm = LLMClient(settings.llm, base_url=scripted_llm.base_url, api_key=None, slots=slots, slots_note=why)
    try:
        assert llm.concurrency == 1 and llm.take_notes() == [why]
        await asyncio.gather(*(llm.complete(HI, step="s") for _ in range(2)))
    finally:
        await llm.aclose()
    assert arrivals(scripted_llm)[1] >= 0.25  # the second waited for the first
