"""The price table: shipped prices for hosted models, `llm.prices` over them, and clear errors."""

from __future__ import annotations

import pytest

from greenloop.errors import GreenloopError
from greenloop.llm import CallRecord, open_llm
from greenloop.llm.prices import parse_prices, price_of, shipped_prices
from greenloop.settings import ModelPrice, Settings
from tests.support.scripted_llm import ScriptedLLM

pytestmark = pytest.mark.timeout(30)


def test_the_shipped_table_prices_common_hosted_models() -> None:
    table = shipped_prices()
    for name in ("gpt-4o-mini", "gpt-4.1", "claude-sonnet-4-5", "gemini-2.5-flash"):
        assert table[name].prompt > 0 and table[name].completion > table[name].prompt


@pytest.mark.parametrize(
    ("sent", "base"),
    [("gpt-4o-mini", "gpt-4o-mini"), ("gpt-4o-mini-2024-07-18", "gpt-4o-mini"),
     ("openai/gpt-4o", "gpt-4o"), ("claude-sonnet-4-5-20250929", "claude-sonnet-4-5"),
     ("claude-3-5-haiku-latest", "claude-3-5-haiku")],
)
def test_dated_and_prefixed_names_find_their_base_price(sent: str, base: str) -> None:
    assert price_of({}, sent) == shipped_prices()[base]


def test_a_setting_overrides_the_shipped_price_and_unknown_models_are_free() -> None:
    mine = {"gpt-4o": ModelPrice(prompt=1.0, completion=1.0)}
    assert price_of(mine, "gpt-4o-2024-08-06") == mine["gpt-4o"]
    assert price_of(mine, "qwen2.5-coder:7b") is None


def test_a_malformed_entry_is_named() -> None:
    with pytest.raises(GreenloopError, match=r"prices\.toml: price entry 'gpt-x' is malformed \(prompt: "):
        parse_prices({"ok": {"prompt": 1}, "gpt-x": {"prompt": "cheap"}}, "prices.toml")
    with pytest.raises(GreenloopError, match="price entry 'gpt-y' is malformed"):
        parse_prices({"gpt-y": 3}, "prices.toml")


async def test_a_hosted_model_name_costs_money_without_any_price_setting(scripted_llm: ScriptedLLM) -> None:
    # before the shipped table, every hosted model cost $0 unless llm.prices listed it
    scripted_llm.models.append("gpt-4o-mini")
    scripted_llm.script("the loop bound")
    settings = Settings(llm={"base_url": scripted_llm.base_url, "api_key": "k", "model": "gpt-4o-mini"},
                        local_model={"enabled": False})
    records: list[CallRecord] = []
    async with open_llm(settings, sink=records.append) as llm:
        await llm.complete([{"role": "user", "content": "what broke? " * 50}], step="diagnosis")
        cost = llm.usage.cost
    (record,) = records
    expected = (record.prompt_tokens * 0.15 + record.completion_tokens * 0.6) / 1_000_000
    assert record.prompt_tokens > 0 and cost == pytest.approx(expected) and cost > 0
