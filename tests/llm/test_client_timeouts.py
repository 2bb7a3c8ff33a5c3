"""A hung model server: a stalled stream ends at `llm.first_token_timeout`, a timed-out request is retried once."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import pytest

from greenloop.llm import LLMError, open_llm
from greenloop.settings import Settings
from tests.support.scripted_llm import Reply, ScriptedLLM, server_error, slow

pytestmark = pytest.mark.timeout(60)
ASK = [{"role": "user", "content": "what broke?"}]


def settings_for(scripted_llm: ScriptedLLM, **llm: Any) -> Settings:
    base = {"base_url": scripted_llm.base_url, "api_key": "k", "model": "scripted", "backoff": 0.01,
            "backoff_max": 0.05, "max_retries": 4}
    return Settings(llm={**base, **llm}, local_model={"enabled": False})


async def test_a_server_that_sends_nothing_ends_the_call_at_the_first_token_timeout(
    scripted_llm: ScriptedLLM,
) -> None:
    scripted_llm.script(slow(30, "too late"))
    settings = settings_for(scripted_llm, first_token_timeout=0.5, timeout=20, slowest_prompt_rate=1000)
    started = time.monotonic()
    async with open_llm(settings) as llm:
        with pytest.raises(LLMError, match=r"sent nothing for 0\.5s \(llm\.first_token_timeout\)"):
            await llm.complete(ASK, step="diagnosis")
        assert llm.usage.calls == 1
    assert time.monotonic() - started < 5  # not timeout x (retries + 1)
    assert len(scripted_llm.requests) == 1  # not retried: a hung server stays hung


async def test_a_slow_start_within_the_limit_is_fine(scripted_llm: ScriptedLLM) -> None:
    scripted_llm.script(slow(0.3, "the loop bound"))
    async with open_llm(settings_for(scripted_llm, first_token_timeout=5)) as llm:
        assert await llm.complete(ASK, step="diagnosis") == "the loop bound"


async def test_a_long_prompt_gets_the_time_to_read_it_at_the_slowest_rate(scripted_llm: ScriptedLLM) -> None:
    # youtube-dl's 3k-token prompt took the loaded 1.5B server over 240 s to read; the call was ended
    # as if the server were hung. Here: 0.3 s for any prompt, but 1 s of reading at 400 tokens/s.
    long = [{"role": "user", "content": "word " * 400}]
    settings = settings_for(scripted_llm, first_token_timeout=0.3, slowest_prompt_rate=400)
    scripted_llm.script(slow(0.6, "read it"))
    async with open_llm(settings) as llm:
        assert await llm.complete(long, step="diagnosis") == "read it"
        with pytest.raises(LLMError, match=r"sent nothing for 0\.3s"):
            await llm.complete(ASK, step="diagnosis")  # a short prompt: the setting's limit


@pytest.mark.parametrize("streamed", [False, True])
async def test_a_request_that_times_out_is_retried_once(scripted_llm: ScriptedLLM, streamed: bool) -> None:
    scripted_llm.script(slow(30, "too late"))
    settings = settings_for(scripted_llm, timeout=0.4, first_token_timeout=60, stop_repeats=streamed)
    started = time.monotonic()
    async with open_llm(settings) as llm:
        with pytest.raises(LLMError, match=r"did not answer within 0\.4s after 1 retry"):
            await llm.complete(ASK, step="diagnosis")
    assert len(scripted_llm.requests) == 2  # max_retries is 4: timeouts get one more try only
    assert time.monotonic() - started < 5


async def test_other_failures_still_use_every_retry(scripted_llm: ScriptedLLM) -> None:
    scripted_llm.script(server_error(), server_error(), server_error(), "ok", repeat=False)
    async with open_llm(settings_for(scripted_llm, first_token_timeout=5)) as llm:
        assert await llm.complete(ASK, step="diagnosis") == "ok"
    assert len(scripted_llm.requests) == 4


async def test_a_request_queued_behind_another_gets_the_limit_once_per_request(scripted_llm: ScriptedLLM) -> None:
    # a one-slot server (the embedded model) answers a second concurrent request only after the first
    scripted_llm.script(Reply(content="x" * 60, chunk_size=4, chunk_delay=0.2), contains="first")
    scripted_llm.script(slow(1.5, "second reply"), contains="second")
    async with open_llm(settings_for(scripted_llm, first_token_timeout=1.0)) as llm:
        first = asyncio.create_task(llm.complete([{"role": "user", "content": "first"}], step="a"))
        await asyncio.sleep(0.3)
        second = await llm.complete([{"role": "user", "content": "second"}], step="b")
        assert (await first, second) == ("x" * 60, "second reply")
