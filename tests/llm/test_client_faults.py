"""The client against the scripted server's faults: retry, give up clearly, never hang, abort on cancel."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable

import pytest

from greenloop.llm import CallRecord, LLMClient, LLMError, open_llm
from greenloop.settings import Settings
from tests.support.scripted_llm import Reply, ScriptedLLM, rate_limited, server_error, slow

pytestmark = pytest.mark.timeout(30)
HI = [{"role": "user", "content": "hi"}]


async def eventually(condition: Callable[[], bool], seconds: float) -> None:
    for _ in range(int(seconds / 0.01)):
        if condition():
            return
        await asyncio.sleep(0.01)


def settings_for(base: Settings, **llm: object) -> Settings:
    return base.model_copy(update={"llm": base.llm.model_copy(update=llm)})


async def test_rate_limit_is_retried_after_the_servers_retry_after(
    scripted_llm: ScriptedLLM, scripted_settings: Settings
) -> None:
    scripted_llm.script(rate_limited(0.3), "fine", step="s")
    records: list[CallRecord] = []
    async with open_llm(settings_for(scripted_settings, backoff_max=2.0), sink=records.append) as llm:
        started = time.monotonic()
        assert await llm.complete(HI, step="s") == "fine"
        waited = time.monotonic() - started
    # backoff is 0.01 s in these settings, so only Retry-After explains the wait
    assert 0.3 <= waited < 2.0
    assert [r.status for r in scripted_llm.requests] == [429, 200]
    assert records[0].retries == 1 and records[0].outcome == "ok"


async def test_retry_after_is_capped_by_backoff_max(
    scripted_llm: ScriptedLLM, scripted_settings: Settings
) -> None:
    scripted_llm.script(rate_limited(30), "fine", step="s")
    async with open_llm(settings_for(scripted_settings, backoff_max=0.2)) as llm:
        started = time.monotonic()
        assert await llm.complete(HI, step="s") == "fine"
    assert time.monotonic() - started < 2


async def test_server_errors_are_retried_until_one_succeeds(
    scripted_llm: ScriptedLLM, llm_client: LLMClient
) -> None:
    scripted_llm.script(server_error(500), server_error(503), "third time", step="s")
    assert await llm_client.complete(HI, step="s") == "third time"
    assert [r.status for r in scripted_llm.requests] == [500, 503, 200]


async def test_persistent_server_error_raises_a_clear_error_after_max_retries(
    scripted_llm: ScriptedLLM, scripted_settings: Settings
) -> None:
    scripted_llm.script(server_error(502, "upstream is down"), step="s")
    records: list[CallRecord] = []
    async with open_llm(settings_for(scripted_settings, max_retries=2), sink=records.append) as llm:
        with pytest.raises(LLMError, match=r"HTTP 502.*upstream is down") as info:
            await llm.complete(HI, step="s")
    assert "after 2 retries" in str(info.value)
    assert len(scripted_llm.requests) == 3
    assert [(r.outcome, r.retries) for r in records] == [("failed", 2)]
    assert records[0].error and "502" in records[0].error


@pytest.mark.parametrize(("status", "hint"), [(400, "rejected the request"), (401, "API key"), (404, "llm.model")])
async def test_client_errors_are_not_retried(
    scripted_llm: ScriptedLLM, llm_client: LLMClient, status: int, hint: str
) -> None:
    scripted_llm.script(Reply(status=status, error="nope"), step="s")
    with pytest.raises(LLMError, match=hint) as info:
        await llm_client.complete(HI, step="s")
    assert info.value.status == status
    assert len(scripted_llm.requests) == 1


async def test_a_slow_server_times_out_and_the_error_says_so(
    scripted_llm: ScriptedLLM, scripted_settings: Settings
) -> None:
    scripted_llm.script(slow(5.0), step="s")
    settings = settings_for(scripted_settings, timeout=0.3, max_retries=1)
    started = time.monotonic()
    async with open_llm(settings) as llm:
        with pytest.raises(LLMError, match=r"did not answer within 0.3s after 1 retry"):
            await llm.complete(HI, step="s")
    assert time.monotonic() - started < 3
    assert len(scripted_llm.requests) == 2


async def test_slow_reply_within_the_timeout_succeeds(scripted_llm: ScriptedLLM, llm_client: LLMClient) -> None:
    scripted_llm.script(slow(0.3, "late but fine"), step="s")
    assert await llm_client.complete(HI, step="s") == "late but fine"


@pytest.mark.parametrize("streamed", [True, False], ids=["streamed", "not-streamed"])
async def test_garbled_or_cut_response_bodies_are_retried(
    scripted_llm: ScriptedLLM, scripted_settings: Settings, streamed: bool
) -> None:
    # llm.stop_repeats streams every request; both transports retry a broken reply from the start
    settings = scripted_settings.model_copy(
        update={"llm": scripted_settings.llm.model_copy(update={"stop_repeats": streamed})}
    )
    cut = Reply("y" * 500, cut_after=10 if streamed else 40)  # chunks when streamed, else bytes
    scripted_llm.script(Reply(raw=b'{"choices": [oops'), cut, "whole", step="s")
    async with open_llm(settings) as llm:
        assert await llm.complete(HI, step="s") == "whole"
    assert [r.stream for r in scripted_llm.requests] == [streamed] * 3


async def test_unreachable_server_raises_a_clear_error(scripted_settings: Settings) -> None:
    dead = ScriptedLLM().start()
    url = dead.base_url
    dead.stop()
    settings = settings_for(scripted_settings, base_url=url, max_retries=1)
    async with open_llm(settings) as llm:
        with pytest.raises(LLMError, match=r"Cannot reach .* after 1 retry"):
            await llm.complete(HI, step="s")


async def test_huge_reply_arrives_whole(scripted_llm: ScriptedLLM, llm_client: LLMClient) -> None:
    content = " ".join(str(n) for n in range(450_000))  # about 3 MB that never repeats verbatim
    scripted_llm.script(Reply(content, chunk_size=65_536), step="s")
    text = await llm_client.complete(HI, step="s")
    assert text == content


async def test_cancelling_the_caller_aborts_the_http_request_at_once(
    scripted_llm: ScriptedLLM, scripted_settings: Settings
) -> None:
    scripted_llm.script(slow(20.0), step="s")
    records: list[CallRecord] = []
    async with open_llm(scripted_settings, sink=records.append) as llm:
        task = asyncio.create_task(llm.complete(HI, step="s"))
        await eventually(lambda: bool(scripted_llm.requests), 5)
        started = time.monotonic()
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        assert time.monotonic() - started < 0.5
        # the server sees the connection closed long before its 20 s reply
        await eventually(lambda: scripted_llm.requests[0].aborted, 2)
    assert scripted_llm.requests[0].aborted
    assert [(r.outcome, r.error) for r in records] == [("failed", "cancelled")]


async def test_every_request_carries_step_header_seed_and_parameters(
    scripted_llm: ScriptedLLM, llm_client: LLMClient
) -> None:
    scripted_llm.script("ok", step="diagnosis")
    await llm_client.complete(HI, step="diagnosis", max_tokens=77)
    request = scripted_llm.requests[0]
    assert request.step == "diagnosis"
    assert request.headers["x-greenloop-step"] == "diagnosis"
    assert request.body["seed"] == 1234
    assert request.body["max_tokens"] == 77
    assert request.body["model"] == "scripted"
    assert request.headers["authorization"] == "Bearer test-key"


async def test_retry_after_as_an_http_date_is_understood(
    scripted_llm: ScriptedLLM, scripted_settings: Settings
) -> None:
    import email.utils

    when = email.utils.formatdate(time.time() + 1.2, usegmt=True)  # whole seconds: waits 0.2-1.2 s
    scripted_llm.script(Reply(status=429, error="slow down", headers={"Retry-After": when}), "ok", step="s")
    async with open_llm(settings_for(scripted_settings, backoff_max=5.0)) as llm:
        started = time.monotonic()
        assert await llm.complete(HI, step="s") == "ok"
    assert 0.1 <= time.monotonic() - started < 3


async def test_a_stream_that_ends_without_finishing_says_why(
    scripted_llm: ScriptedLLM, scripted_settings: Settings
) -> None:
    # what llama-cpp-python sends a running stream when another request arrives: [DONE], no finish_reason
    scripted_llm.script(Reply("half a rep", finish_reason=None), step="s")  # type: ignore[arg-type]
    settings = scripted_settings.model_copy(
        update={"llm": scripted_settings.llm.model_copy(update={"max_retries": 0})}
    )
    async with open_llm(settings) as llm:
        with pytest.raises(LLMError, match="--interrupt_requests false"):
            await llm.complete(HI, step="s")
