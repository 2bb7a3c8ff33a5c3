"""Streaming: deltas in order, time to first token, usage, and cut-off streams."""

from __future__ import annotations

import pytest

from greenloop.llm import CallRecord, LLMError, open_llm
from greenloop.settings import Settings
from tests.support.scripted_llm import Reply, ScriptedLLM, count_tokens, cut_stream, rate_limited

pytestmark = pytest.mark.timeout(30)
ASK = [{"role": "user", "content": "why does it fail?"}]
TEXT = "The loop stops one element early because range excludes its end."


async def test_deltas_arrive_in_order_and_the_call_is_recorded(
    scripted_llm: ScriptedLLM, scripted_settings: Settings
) -> None:
    scripted_llm.script(Reply(TEXT, chunk_size=5, chunk_delay=0.01), step="diagnosis")
    records: list[CallRecord] = []
    async with open_llm(scripted_settings, sink=records.append) as llm:
        deltas = [d async for d in llm.stream(ASK, step="diagnosis")]
    assert len(deltas) == len(TEXT) // 5 + 1
    assert "".join(deltas) == TEXT
    (record,) = records
    assert record.outcome == "ok" and record.reply == TEXT
    assert record.ttft is not None and 0 < record.ttft <= record.latency
    assert record.completion_tokens == count_tokens(TEXT) and not record.tokens_estimated
    assert scripted_llm.requests[0].body["stream_options"] == {"include_usage": True}


async def test_stream_failing_before_any_text_is_retried(
    scripted_llm: ScriptedLLM, scripted_settings: Settings
) -> None:
    scripted_llm.script(rate_limited(0.01), cut_stream(TEXT, after_chunks=0), Reply(TEXT), step="d")
    records: list[CallRecord] = []
    async with open_llm(scripted_settings, sink=records.append) as llm:
        assert "".join([d async for d in llm.stream(ASK, step="d")]) == TEXT
    assert len(scripted_llm.requests) == 3
    assert records[0].retries == 2


async def test_stream_cut_off_mid_text_raises_a_clear_error(
    scripted_llm: ScriptedLLM, scripted_settings: Settings
) -> None:
    scripted_llm.script(cut_stream(TEXT, after_chunks=3), step="d")
    records: list[CallRecord] = []
    got: list[str] = []
    async with open_llm(scripted_settings, sink=records.append) as llm:
        with pytest.raises(LLMError, match=r"cut the reply off after 12 characters"):
            async for delta in llm.stream(ASK, step="d"):
                got.append(delta)
    assert "".join(got) == TEXT[:12]
    assert [(r.outcome, r.reply) for r in records] == [("failed", TEXT[:12])]


async def test_stream_without_usage_counts_tokens_offline(
    scripted_llm: ScriptedLLM, scripted_settings: Settings
) -> None:
    scripted_llm.script(Reply(TEXT, usage=False), step="d")
    records: list[CallRecord] = []
    async with open_llm(scripted_settings, sink=records.append) as llm:
        assert "".join([d async for d in llm.stream(ASK, step="d")]) == TEXT
    (record,) = records
    assert record.tokens_estimated
    assert 10 <= record.completion_tokens <= 20  # cl100k: 14 tokens; the chars/4 fallback: 17
    assert record.prompt_tokens > 0


async def test_consumer_stopping_early_closes_the_stream_and_records_it(
    scripted_llm: ScriptedLLM, scripted_settings: Settings
) -> None:
    scripted_llm.script(Reply(TEXT * 50, chunk_size=4, chunk_delay=0.01), step="d")
    records: list[CallRecord] = []
    async with open_llm(scripted_settings, sink=records.append) as llm:
        stream = llm.stream(ASK, step="d")
        first = await anext(stream)  # type: ignore[call-overload]
        await stream.aclose()  # type: ignore[attr-defined]
    assert first == TEXT[:4]
    assert [(r.outcome, r.error) for r in records] == [("failed", "cancelled")]
